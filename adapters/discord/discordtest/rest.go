package discordtest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
	"unicode/utf8"
)

// maxContent is Discord's message length limit.
const maxContent = 2000

// serveREST routes /api/v10/… requests.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p, ok := strings.CutPrefix(r.URL.Path, "/api/v10")
	if !ok {
		s.record(r, body, http.StatusNotFound)
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
		return
	}
	// A multipart body is recorded and routed as its payload_json; its
	// files go along with the request.
	body, files, splitErr := splitMultipart(r.Header.Get("Content-Type"), body, s.opt.UploadLimit)
	r = withUploads(r, files)
	// The answer is held until the call is recorded, so that a client that
	// saw the answer finds the call in Calls.
	rec := httptest.NewRecorder()
	defer func() {
		s.record(r, body, rec.Code)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}()
	if s.limited(rec, r, p) {
		return
	}
	if splitErr == errTooLarge {
		writeError(rec, http.StatusRequestEntityTooLarge, 40005, "Request entity too large")
		return
	}
	if splitErr != nil {
		writeError(rec, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	seg := strings.Split(strings.Trim(p, "/"), "/")
	if !s.authorized(r, seg) {
		writeError(rec, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	s.route(rec, r, seg, body)
}

// authorized checks the bot token; webhook and interaction routes carry
// their own token in the path.
func (s *Server) authorized(r *http.Request, seg []string) bool {
	if seg[0] == "webhooks" && len(seg) >= 3 || seg[0] == "interactions" {
		return true
	}
	return r.Header.Get("Authorization") == "Bot "+s.opt.Token
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, seg []string, body []byte) {
	n := len(seg)
	m := r.Method
	switch {
	case m == "GET" && n == 1 && seg[0] == "gateway", m == "GET" && n == 2 && seg[0] == "gateway" && seg[1] == "bot":
		o := s.sample("rest/gateway_bot")
		o["url"] = "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway"
		if n == 1 {
			o = obj{"url": o["url"]}
		}
		writeJSON(w, http.StatusOK, o)
	case m == "GET" && n == 2 && seg[0] == "users" && seg[1] == "@me":
		o := s.sample("rest/user")
		o["id"], o["username"] = s.bot.ID, s.bot.Username
		writeJSON(w, http.StatusOK, o)
	case m == "GET" && n == 3 && seg[0] == "users" && seg[1] == "@me" && seg[2] == "guilds":
		s.myGuilds(w)
	case m == "GET" && n == 3 && seg[0] == "guilds" && seg[2] == "roles":
		s.guildRoles(w, seg[1])
	case seg[0] == "channels" && n >= 2:
		s.routeChannel(w, r, seg[1], seg[2:], body)
	case seg[0] == "webhooks" && n >= 3:
		s.routeWebhook(w, r, seg[1], seg[2], seg[3:], body)
	case seg[0] == "webhooks" && n == 2:
		s.modifyWebhook(w, r, seg[1], body)
	case m == "POST" && n == 4 && seg[0] == "interactions" && seg[3] == "callback":
		s.callback(w, r, seg[1], seg[2], body)
	case m == "PUT" && seg[0] == "applications" && n == 3 && seg[2] == "commands":
		s.overwrite(w, seg[1], "", body)
	case m == "PUT" && seg[0] == "applications" && n == 5 && seg[2] == "guilds" && seg[4] == "commands":
		s.overwrite(w, seg[1], seg[3], body)
	default:
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}

func (s *Server) routeChannel(w http.ResponseWriter, r *http.Request, id string, rest []string, body []byte) {
	s.mu.Lock()
	ch, ok := s.channels[id]
	var c Channel
	if ok {
		c = *ch
	}
	deny := s.noWebhooks[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	m := r.Method
	switch {
	case m == "GET" && len(rest) == 0:
		writeJSON(w, http.StatusOK, s.channelJSON(c))
	case m == "POST" && len(rest) == 1 && rest[0] == "typing":
		w.WriteHeader(http.StatusNoContent)
	case m == "POST" && len(rest) == 1 && rest[0] == "messages":
		var in struct {
			Content   string
			Reference *struct {
				MessageID string `json:"message_id"`
			} `json:"message_reference"`
		}
		if !decode(w, body, &in) || !validContent(w, in.Content) {
			return
		}
		if !nonEmpty(w, body, r) {
			return
		}
		msg := &Message{ChannelID: c.ID, GuildID: c.GuildID, Content: in.Content, AuthorID: s.bot.ID,
			Username: s.bot.Username, Bot: true, Attachments: s.storeUploads(c.ID, uploads(r))}
		if in.Reference != nil {
			msg.ReplyTo = in.Reference.MessageID
		}
		s.addMessage(msg, true)
		writeJSON(w, http.StatusOK, s.messageJSON(*msg))
	case (m == "PATCH" || m == "DELETE") && len(rest) == 2 && rest[0] == "messages":
		s.mu.Lock()
		msg, ok := s.messages[rest[1]]
		ok = ok && msg.ChannelID == c.ID && !msg.Deleted
		s.mu.Unlock()
		if !ok {
			writeError(w, http.StatusNotFound, 10008, "Unknown Message")
			return
		}
		if msg.AuthorID != s.bot.ID && m == "PATCH" {
			writeError(w, http.StatusForbidden, 50005, "Cannot edit a message authored by another user")
			return
		}
		s.editOrDelete(w, r, msg, body)
	case len(rest) == 1 && rest[0] == "webhooks":
		if c.IsThread() {
			writeError(w, http.StatusBadRequest, 50024, "Cannot execute action on this channel type")
			return
		}
		if deny {
			writeError(w, http.StatusForbidden, 50013, "Missing Permissions")
			return
		}
		if m == "GET" {
			s.listWebhooks(w, c)
			return
		}
		if m == "POST" {
			s.createWebhook(w, c, body)
			return
		}
		writeError(w, http.StatusMethodNotAllowed, 0, "405: Method Not Allowed")
	default:
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}

func decode(w http.ResponseWriter, body []byte, v any) bool {
	if len(body) == 0 {
		return true
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return false
	}
	return true
}

// validContent refuses text Discord would refuse.
func validContent(w http.ResponseWriter, content string) bool {
	if utf8.RuneCountInString(content) > maxContent {
		writeJSON(w, http.StatusBadRequest, obj{"message": "Invalid Form Body", "code": 50035,
			"errors": obj{"content": obj{"_errors": []obj{{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}}}}})
		return false
	}
	return true
}

// editOrDelete applies a PATCH (content, components, new files) or DELETE
// to msg.
func (s *Server) editOrDelete(w http.ResponseWriter, r *http.Request, msg *Message, body []byte) {
	if r.Method == "DELETE" {
		s.mu.Lock()
		msg.Deleted = true
		m := *msg
		s.mu.Unlock()
		s.echoDelete(m)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var in struct {
		Content    *string
		Components json.RawMessage
	}
	if !decode(w, body, &in) {
		return
	}
	if in.Content != nil && !validContent(w, *in.Content) {
		return
	}
	added := s.storeUploads(msg.ChannelID, uploads(r))
	s.mu.Lock()
	msg.Attachments = append(msg.Attachments, added...)
	if in.Content != nil {
		msg.Content = *in.Content
	}
	if in.Components != nil {
		msg.Components = in.Components
	}
	msg.Loading = false
	msg.Edits = append(msg.Edits, time.Now())
	m := *msg
	s.mu.Unlock()
	s.echoUpdate(m)
	writeJSON(w, http.StatusOK, s.messageJSON(m))
}

func (s *Server) listWebhooks(w http.ResponseWriter, c Channel) {
	s.mu.Lock()
	var out []obj
	for _, h := range s.webhooks {
		if h.channelID == c.ID {
			out = append(out, s.webhookJSON(h))
		}
	}
	s.mu.Unlock()
	if out == nil {
		out = []obj{}
	}
	writeJSON(w, http.StatusOK, out)
}

// MaxWebhooks is how many webhooks Discord allows in a channel.
const MaxWebhooks = 15

func (s *Server) createWebhook(w http.ResponseWriter, c Channel, body []byte) {
	var in struct{ Name, Avatar string }
	if !decode(w, body, &in) {
		return
	}
	if !validHookName(in.Name) || !validAvatar(in.Avatar) {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	s.mu.Lock()
	count := 0
	for _, h := range s.webhooks {
		if h.channelID == c.ID {
			count++
		}
	}
	if count >= MaxWebhooks {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, 30007, "Maximum number of webhooks reached (15)")
		return
	}
	h := &webhook{id: s.newIDLocked(), channelID: c.ID, guildID: c.GuildID, name: in.Name, avatar: in.Avatar, byApp: true}
	h.token = "wh-" + h.id
	s.webhooks[h.id] = h
	o := s.webhookJSON(h)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, o)
}

func validHookName(name string) bool {
	return name != "" && len([]rune(name)) <= 80 && !containsFold(name, "discord") && !containsFold(name, "clyde")
}

// validAvatar checks an avatar as Discord takes it: empty, or a data URI of
// a PNG, JPEG, GIF or WebP image in base64.
func validAvatar(a string) bool {
	if a == "" {
		return true
	}
	head, data, ok := strings.Cut(a, ",")
	if !ok {
		return false
	}
	switch head {
	case "data:image/png;base64", "data:image/jpeg;base64", "data:image/gif;base64", "data:image/webp;base64":
	default:
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	return err == nil && len(raw) > 0 && len(raw) <= 10<<20
}

// modifyWebhook serves PATCH (and GET) /webhooks/{id} with the bot's token:
// a new name and avatar.
func (s *Server) modifyWebhook(w http.ResponseWriter, r *http.Request, id string, body []byte) {
	s.mu.Lock()
	h, ok := s.webhooks[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	switch r.Method {
	case "GET":
	case "PATCH":
		var in struct {
			Name   *string
			Avatar *string
		}
		if !decode(w, body, &in) {
			return
		}
		if in.Name != nil && !validHookName(*in.Name) || in.Avatar != nil && !validAvatar(*in.Avatar) {
			writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
			return
		}
		s.mu.Lock()
		if in.Name != nil {
			h.name = *in.Name
		}
		if in.Avatar != nil {
			h.avatar = *in.Avatar
		}
		s.mu.Unlock()
	default:
		writeError(w, http.StatusMethodNotAllowed, 0, "405: Method Not Allowed")
		return
	}
	s.mu.Lock()
	o := s.webhookJSON(h)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, o)
}

// AddAppWebhook adds a webhook to a channel as if the bot had made it
// earlier (before a restart), with a name and an avatar data URI.
func (s *Server) AddAppWebhook(channelID, name, avatar string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := &webhook{id: s.newIDLocked(), channelID: channelID, name: name, avatar: avatar, byApp: true}
	if c := s.channels[channelID]; c != nil {
		h.guildID = c.GuildID
	}
	h.token = "wh-" + h.id
	s.webhooks[h.id] = h
	return h.id
}

// AddForeignWebhook adds a webhook to a channel that another integration
// made; the bot must not take it for its own.
func (s *Server) AddForeignWebhook(channelID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[channelID]
	h := &webhook{id: s.newIDLocked(), channelID: channelID, name: "Other"}
	if c != nil {
		h.guildID = c.GuildID
	}
	h.token = "wh-" + h.id
	s.webhooks[h.id] = h
	return h.id
}

// DeleteWebhook removes a webhook, as a server admin might.
func (s *Server) DeleteWebhook(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.webhooks, id)
}

func containsFold(s, sub string) bool { return strings.Contains(strings.ToLower(s), sub) }

// routeWebhook serves channel webhooks and interaction follow-ups (whose
// "webhook" is the application, with the interaction's token).
func (s *Server) routeWebhook(w http.ResponseWriter, r *http.Request, id, token string, rest []string, body []byte) {
	if id == s.bot.ID {
		s.routeFollowup(w, r, token, rest, body)
		return
	}
	s.mu.Lock()
	h, ok := s.webhooks[id]
	s.mu.Unlock()
	if !ok || h.token != token {
		writeError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	threadID := r.URL.Query().Get("thread_id")
	channelID := h.channelID
	if threadID != "" {
		t, ok := s.Channel(threadID)
		if !ok || !t.IsThread() || t.ParentID != h.channelID {
			writeError(w, http.StatusBadRequest, 10003, "Unknown Channel")
			return
		}
		channelID = threadID
	}
	switch {
	case r.Method == "POST" && len(rest) == 0:
		var in struct {
			Content   string
			Username  string
			AvatarURL string `json:"avatar_url"`
		}
		if !decode(w, body, &in) || !validContent(w, in.Content) || !nonEmpty(w, body, r) {
			return
		}
		if containsFold(in.Username, "discord") || containsFold(in.Username, "clyde") || len([]rune(in.Username)) > 80 {
			writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
			return
		}
		name := in.Username
		if name == "" {
			name = h.name
		}
		s.mu.Lock()
		hookAvatar := h.avatar
		s.mu.Unlock()
		msg := &Message{ChannelID: channelID, GuildID: h.guildID, Content: in.Content, AuthorID: h.id,
			Username: name, AvatarURL: in.AvatarURL, WebhookAvatar: hookAvatar, WebhookID: h.id, Bot: true,
			Attachments: s.storeUploads(channelID, uploads(r))}
		s.addMessage(msg, true)
		if r.URL.Query().Get("wait") != "true" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, s.messageJSON(*msg))
	case len(rest) == 2 && rest[0] == "messages" && (r.Method == "PATCH" || r.Method == "DELETE" || r.Method == "GET"):
		s.mu.Lock()
		msg, ok := s.messages[rest[1]]
		// A message in a thread is found only with its thread_id.
		ok = ok && msg.WebhookID == h.id && msg.ChannelID == channelID && !msg.Deleted
		s.mu.Unlock()
		s.onMessage(w, r, msg, ok, body)
	default:
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}

// addMessage stores msg (filling id and time) and echoes it to the gateway.
func (s *Server) addMessage(msg *Message, echo bool) {
	s.mu.Lock()
	msg.ID = s.newIDLocked()
	msg.Created = time.Now()
	s.messages[msg.ID] = msg
	s.order = append(s.order, msg.ID)
	m := *msg
	s.mu.Unlock()
	if echo && !m.Ephemeral && !m.Loading {
		s.echoCreate(m)
	}
}

// overwrite replaces the application's commands (bulk overwrite).
func (s *Server) overwrite(w http.ResponseWriter, app, guildID string, body []byte) {
	if app != s.bot.ID {
		writeError(w, http.StatusForbidden, 50001, "Missing Access")
		return
	}
	var in []obj
	if !decode(w, body, &in) {
		return
	}
	var out []json.RawMessage
	var resp []obj
	for _, c := range in {
		if !validCommand(c) {
			writeJSON(w, http.StatusBadRequest, obj{"message": "Invalid Form Body", "code": 50035})
			return
		}
		o := s.sample("rest/application_command")
		for k, v := range c {
			o[k] = v
		}
		o["id"], o["application_id"], o["version"] = s.NewID(), s.bot.ID, s.NewID()
		if guildID != "" {
			o["guild_id"] = guildID
		}
		raw, _ := json.Marshal(o)
		out = append(out, raw)
		resp = append(resp, o)
	}
	s.mu.Lock()
	s.commands[guildID] = out
	s.mu.Unlock()
	if resp == nil {
		resp = []obj{}
	}
	writeJSON(w, http.StatusOK, resp)
}

// validCommand checks what Discord checks of a command: names of 1–32
// lower-case characters, descriptions of 1–100, on the command and every
// option.
func validCommand(c obj) bool {
	name, _ := c["name"].(string)
	desc, _ := c["description"].(string)
	if name == "" || len(name) > 32 || strings.ToLower(name) != name || strings.ContainsAny(name, " ") {
		return false
	}
	if n := utf8.RuneCountInString(desc); n < 1 || n > 100 {
		return false
	}
	opts, _ := c["options"].([]any)
	for _, o := range opts {
		oo, ok := o.(obj)
		if !ok || !validCommand(oo) {
			return false
		}
	}
	return true
}

// onMessage answers GET, PATCH or DELETE on one message; found is false when
// the route does not reach it.
func (s *Server) onMessage(w http.ResponseWriter, r *http.Request, msg *Message, found bool, body []byte) {
	if !found {
		writeError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	if r.Method == "GET" {
		s.mu.Lock()
		m := *msg
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.messageJSON(m))
		return
	}
	s.editOrDelete(w, r, msg, body)
}

// nonEmpty refuses a new message with nothing in it (no text, files,
// components, embeds or stickers), as Discord does.
func nonEmpty(w http.ResponseWriter, body []byte, r *http.Request) bool {
	var in struct {
		Content    string
		Components []json.RawMessage
		Embeds     []json.RawMessage
		StickerIDs []string `json:"sticker_ids"`
	}
	_ = json.Unmarshal(body, &in)
	if strings.TrimSpace(in.Content) == "" && len(uploads(r)) == 0 && len(in.Components) == 0 && len(in.Embeds) == 0 && len(in.StickerIDs) == 0 {
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return false
	}
	return true
}
