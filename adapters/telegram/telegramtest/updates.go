package telegramtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// SendText has user write text to the bot in their private chat (whose id
// is the user's id) and queues the update. It returns the update's and the
// message's ids.
func (s *Server) SendText(from User, text string) (updateID, messageID int) {
	s.mu.Lock()
	delete(s.strangers, from.ID)
	s.mu.Unlock()
	return s.push(from.ID, privateInfo(from), from, text, 0)
}

// privateInfo is the chat a user's private chat with the bot is.
func privateInfo(from User) map[string]any {
	info := map[string]any{"id": from.ID, "type": "private", "first_name": from.FirstName}
	if from.UserName != "" {
		info["username"] = from.UserName
	}
	return info
}

// SendGroupText has user write text in a group chat, replying to the
// message replyTo when it is not 0, and queues the update.
func (s *Server) SendGroupText(chat Chat, from User, text string, replyTo int) (updateID, messageID int) {
	return s.push(chat.ID, groupInfo(chat), from, text, replyTo)
}

// groupInfo is a group chat as the API shows it.
func groupInfo(chat Chat) map[string]any {
	typ := chat.Type
	if typ == "" {
		typ = "supergroup"
	}
	return map[string]any{"id": chat.ID, "type": typ, "title": chat.Title}
}

func (s *Server) push(chatID int64, info map[string]any, from User, text string, replyTo int) (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushMessage(chatID, info, &Message{From: from, Text: text, ReplyTo: replyTo})
}

// pushMessage adds m, written by a user, to the chat and queues the
// update; s.mu is held.
func (s *Server) pushMessage(chatID int64, info map[string]any, m *Message) (int, int) {
	c := s.chat(chatID, info)
	c.nextID++
	m.ID, m.ChatID = c.nextID, chatID
	c.messages = append(c.messages, m)
	wire := s.wire(c, m)
	if ents := entities(m.Text); len(ents) > 0 {
		wire["entities"] = ents
	}
	if ents := entities(m.Caption); len(ents) > 0 {
		wire["caption_entities"] = ents
	}
	id := s.enqueue(map[string]any{"message": wire})
	return id, m.ID
}

// Press has user press the inline button with data under the bot's message
// messageID in chat chatID, and queues the callback query update.
func (s *Server) Press(from User, chatID int64, messageID int, data string) (updateID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chat(chatID, map[string]any{"id": chatID, "type": "private", "first_name": from.FirstName})
	var msg map[string]any
	for _, m := range c.messages {
		if m.ID == messageID {
			msg = s.wire(c, m)
		}
	}
	if msg == nil {
		msg = map[string]any{"message_id": messageID, "date": time.Now().Unix(), "chat": c.info}
	}
	s.callbackSeq++
	return s.enqueue(map[string]any{"callback_query": map[string]any{
		"id":            strconv.FormatInt(from.ID, 10) + "-" + strconv.Itoa(s.callbackSeq),
		"from":          from,
		"message":       msg,
		"chat_instance": "ci-" + strconv.FormatInt(chatID, 10),
		"data":          data,
	}})
}

// Push queues a raw update; update_id is set to the next id. It returns
// that id.
func (s *Server) Push(update map[string]any) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueue(update)
}

// Redeliver queues an update again, as Telegram does with an update whose
// delivery it believes failed. getUpdates still drops it when its id is
// below the offset asked for.
func (s *Server) Redeliver(updateID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.delivered[updateID]
	if !ok {
		return
	}
	s.insert(queued{id: updateID, raw: raw})
}

// RawUpdate returns the JSON of an update pushed before, nil when unknown.
func (s *Server) RawUpdate(updateID int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.delivered[updateID]...)
}

// Queued returns the ids of the updates not yet confirmed by an offset.
func (s *Server) Queued() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int
	for _, q := range s.queue {
		ids = append(ids, q.id)
	}
	return ids
}

// enqueue numbers and queues an update; s.mu is held.
func (s *Server) enqueue(update map[string]any) int {
	s.nextUpdate++
	id := s.nextUpdate
	update["update_id"] = id
	raw, _ := json.Marshal(update)
	s.delivered[id] = raw
	s.insert(queued{id: id, raw: raw})
	return id
}

func (s *Server) insert(q queued) {
	s.queue = append(s.queue, q)
	sort.SliceStable(s.queue, func(i, j int) bool { return s.queue[i].id < s.queue[j].id })
	close(s.wake)
	s.wake = make(chan struct{})
}

// getUpdates confirms the updates below offset and answers the next ones,
// waiting up to timeout seconds for one to arrive.
func (s *Server) getUpdates(r *http.Request, p url.Values) (any, *apiError) {
	offset, _ := strconv.Atoi(p.Get("offset"))
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _ := strconv.Atoi(p.Get("timeout"))
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	// The offset confirms, and Telegram forgets, the updates below it when
	// the request arrives.
	s.mu.Lock()
	if s.webhookURL != "" {
		s.mu.Unlock()
		return nil, &apiError{code: 409, description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	if offset > 0 {
		kept := s.queue[:0]
		for _, q := range s.queue {
			if q.id >= offset {
				kept = append(kept, q)
			}
		}
		s.queue = kept
	}
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if s.webhookURL != "" {
			s.mu.Unlock()
			return nil, &apiError{code: 409, description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
		}
		ready := []json.RawMessage{}
		now := time.Now()
		for _, q := range s.queue {
			if len(ready) == limit {
				break
			}
			if q.id >= offset {
				ready = append(ready, q.raw)
				if _, ok := s.served[q.id]; !ok {
					s.served[q.id] = now
				}
			}
		}
		wake := s.wake
		s.mu.Unlock()
		left := time.Until(deadline)
		if len(ready) > 0 || left <= 0 {
			return ready, nil
		}
		t := time.NewTimer(left)
		select {
		case <-wake:
		case <-t.C:
		case <-r.Context().Done():
		case <-s.done:
		}
		t.Stop()
		if r.Context().Err() != nil {
			return []json.RawMessage{}, nil
		}
		select {
		case <-s.done:
			return []json.RawMessage{}, nil
		default:
		}
	}
}

// entities marks a leading bot command and every @mention, with offsets in
// UTF-16 code units as Telegram counts them.
func entities(text string) []map[string]any {
	var out []map[string]any
	if strings.HasPrefix(text, "/") {
		end := strings.IndexAny(text, " \n")
		if end < 0 {
			end = len(text)
		}
		out = append(out, map[string]any{"type": "bot_command", "offset": 0, "length": utf16Len(text[:end])})
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && isNameByte(text[i-1])) {
			continue
		}
		j := i + 1
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		if j-i > 1 {
			out = append(out, map[string]any{"type": "mention", "offset": utf16Len(text[:i]), "length": utf16Len(text[i:j])})
		}
		i = j - 1
	}
	return out
}

func isNameByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }
