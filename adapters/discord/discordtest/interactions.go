package discordtest

import (
	"encoding/json"
	"net/http"
	"time"
)

// interaction is an interaction the server dispatched.
type interaction struct {
	id, token, channelID, guildID string
	kind                          int
	// messageID is the message a component interaction's button is on.
	messageID string
	callbacks []Callback
	original  string
	followups []string
	choices   []Choice
}

// Callback is an interaction response the client sent.
type Callback struct {
	// Type is the interaction response type: 4 message, 5 deferred
	// message, 6 deferred update, 7 update, 8 autocomplete result.
	Type int
	// Ephemeral is true when the response's flags ask for it.
	Ephemeral bool
	At        time.Time
}

// Choice is an autocomplete choice.
type Choice struct {
	Name  string
	Value string
}

// Interaction is a handle on a dispatched interaction for assertions.
type Interaction struct {
	s     *Server
	Token string
	ID    string
}

// Callbacks returns the responses the client sent, in order.
func (ix *Interaction) Callbacks() []Callback {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	return append([]Callback(nil), ix.s.interactions[ix.Token].callbacks...)
}

// Messages returns the interaction's original response (once it has
// content) and its follow-ups, as they are now.
func (ix *Interaction) Messages() []Message {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	in := ix.s.interactions[ix.Token]
	var out []Message
	if m, ok := ix.s.messages[in.original]; ok && !m.Loading && !m.Deleted {
		out = append(out, *m)
	}
	for _, id := range in.followups {
		if m, ok := ix.s.messages[id]; ok && !m.Deleted {
			out = append(out, *m)
		}
	}
	return out
}

// Original returns the message the interaction's original response is (for
// a button press, the message with the button).
func (ix *Interaction) Original() (Message, bool) {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	m, ok := ix.s.messages[ix.s.interactions[ix.Token].original]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Choices returns the autocomplete choices the client answered with.
func (ix *Interaction) Choices() []Choice {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	return append([]Choice(nil), ix.s.interactions[ix.Token].choices...)
}

// callback serves POST /interactions/{id}/{token}/callback.
func (s *Server) callback(w http.ResponseWriter, r *http.Request, id, token string, body []byte) {
	var in struct {
		Type int
		Data *struct {
			Content    string
			Flags      int
			Components json.RawMessage
			Choices    []struct {
				Name  string
				Value any
			}
		}
	}
	if !decode(w, body, &in) {
		return
	}
	s.mu.Lock()
	ix, ok := s.interactions[token]
	channelID := ""
	if ok {
		channelID = ix.channelID
	}
	s.mu.Unlock()
	files := s.storeUploads(channelID, uploads(r))
	s.mu.Lock()
	ix, ok = s.interactions[token]
	if !ok || ix.id != id {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	}
	if len(ix.callbacks) > 0 {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
		return
	}
	flags := 0
	if in.Data != nil {
		flags = in.Data.Flags
	}
	ix.callbacks = append(ix.callbacks, Callback{Type: in.Type, Ephemeral: flags&64 != 0, At: time.Now()})
	var echo *Message
	switch in.Type {
	case 4, 5:
		msg := &Message{ID: s.newIDLocked(), ChannelID: ix.channelID, GuildID: ix.guildID, AuthorID: s.bot.ID,
			Username: s.bot.Username, WebhookID: s.bot.ID, Bot: true, Flags: flags, Ephemeral: flags&64 != 0,
			Interaction: token, Loading: in.Type == 5, Created: time.Now(), Attachments: files}
		if in.Data != nil {
			msg.Content, msg.Components = in.Data.Content, in.Data.Components
		}
		s.messages[msg.ID] = msg
		s.order = append(s.order, msg.ID)
		ix.original = msg.ID
		if !msg.Ephemeral && !msg.Loading {
			m := *msg
			echo = &m
		}
	case 6:
		ix.original = ix.messageID
	case 7:
		ix.original = ix.messageID
		if m, ok := s.messages[ix.messageID]; ok && in.Data != nil {
			m.Content, m.Components = in.Data.Content, in.Data.Components
			m.Attachments = append(m.Attachments, files...)
			m.Edits = append(m.Edits, time.Now())
		}
	case 8:
		if in.Data != nil {
			for _, c := range in.Data.Choices {
				v, _ := c.Value.(string)
				ix.choices = append(ix.choices, Choice{Name: c.Name, Value: v})
			}
		}
	default:
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	s.mu.Unlock()
	if echo != nil {
		s.echoCreate(*echo)
	}
	w.WriteHeader(http.StatusNoContent)
}

// routeFollowup serves /webhooks/{app}/{token}[/messages/{id}].
func (s *Server) routeFollowup(w http.ResponseWriter, r *http.Request, token string, rest []string, body []byte) {
	s.mu.Lock()
	ix, ok := s.interactions[token]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	switch {
	case r.Method == "POST" && len(rest) == 0:
		var in struct {
			Content    string
			Flags      int
			Components json.RawMessage
		}
		if !decode(w, body, &in) || !validContent(w, in.Content) || !nonEmpty(w, body, r) {
			return
		}
		s.mu.Lock()
		acked := len(ix.callbacks) > 0
		s.mu.Unlock()
		if !acked {
			writeError(w, http.StatusNotFound, 10015, "Unknown Webhook")
			return
		}
		msg := &Message{ChannelID: ix.channelID, GuildID: ix.guildID, Content: in.Content, AuthorID: s.bot.ID,
			Username: s.bot.Username, WebhookID: s.bot.ID, Bot: true, Flags: in.Flags, Ephemeral: in.Flags&64 != 0,
			Interaction: token, Components: in.Components, Attachments: s.storeUploads(ix.channelID, uploads(r))}
		s.addMessage(msg, true)
		s.mu.Lock()
		ix.followups = append(ix.followups, msg.ID)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.messageJSON(*msg))
	case len(rest) == 2 && rest[0] == "messages":
		s.mu.Lock()
		id := rest[1]
		if id == "@original" {
			id = ix.original
		}
		msg, ok := s.messages[id]
		ok = ok && !msg.Deleted
		s.mu.Unlock()
		s.onMessage(w, r, msg, ok, body)
	default:
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}
