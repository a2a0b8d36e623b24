package telegramtest

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxText is Telegram's limit on a message's text after entity parsing, in
// UTF-16 code units.
const maxText = 4096

// chat returns the chat with id, creating it with info; s.mu is held.
func (s *Server) chat(id int64, info map[string]any) *chatState {
	c := s.chats[id]
	if c == nil {
		c = &chatState{info: info}
		s.chats[id] = c
	}
	return c
}

// wire is m as the API shows it; s.mu is held.
func (s *Server) wire(c *chatState, m *Message) map[string]any {
	out := map[string]any{
		"message_id": m.ID,
		"from":       m.From,
		"chat":       c.info,
		"date":       time.Now().Unix(),
	}
	// A message with a file has a caption in place of text.
	if m.Kind == "" || m.Text != "" {
		out["text"] = m.Text
	}
	if m.Caption != "" {
		out["caption"] = m.Caption
	}
	for k, v := range m.extra {
		out[k] = v
	}
	if len(m.Entities) > 0 {
		out["entities"] = m.Entities
	}
	if m.ReplyTo != 0 {
		for _, r := range c.messages {
			if r.ID == m.ReplyTo {
				reply := map[string]any{"message_id": r.ID, "from": r.From, "chat": c.info, "date": time.Now().Unix(), "text": r.Text}
				if len(r.Entities) > 0 {
					reply["entities"] = r.Entities
				}
				out["reply_to_message"] = reply
			}
		}
	}
	if m.Edits > 0 {
		out["edit_date"] = time.Now().Unix()
	}
	if m.Buttons != nil {
		out["reply_markup"] = map[string]any{"inline_keyboard": m.Buttons}
	}
	return out
}

// visible parses text by parse_mode and checks its length; it returns the
// text as shown and its formatting entities.
func visible(text, mode string) (string, []Entity, *apiError) {
	if strings.TrimSpace(text) == "" {
		return "", nil, badRequest("message text is empty")
	}
	shown := text
	var ents []Entity
	switch strings.ToLower(mode) {
	case "":
	case "html":
		var refused string
		if shown, ents, refused = parseHTMLEntities(text); refused != "" {
			return "", nil, badRequest("can't parse entities: " + refused)
		}
	default:
		return "", nil, badRequest("unsupported parse_mode " + mode + " in telegramtest")
	}
	if strings.TrimSpace(shown) == "" {
		return "", nil, badRequest("message text is empty")
	}
	if utf16Len(shown) > maxText {
		return "", nil, badRequest("message is too long")
	}
	return shown, ents, nil
}

// keyboard decodes reply_markup; a missing markup is nil, an empty one is
// an empty non-nil keyboard.
func keyboard(raw string) ([][]Button, *apiError) {
	if raw == "" {
		return nil, nil
	}
	var m struct {
		InlineKeyboard [][]Button `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	for _, row := range m.InlineKeyboard {
		for _, b := range row {
			if len(b.Data) > 64 {
				return nil, badRequest("BUTTON_DATA_INVALID")
			}
		}
	}
	if m.InlineKeyboard == nil {
		m.InlineKeyboard = [][]Button{}
	}
	return m.InlineKeyboard, nil
}

// content is a sent or edited message's text as a client shows it, its
// entities and its inline keyboard (nil for none).
func content(p url.Values) (string, []Entity, [][]Button, *apiError) {
	shown, ents, apiErr := visible(p.Get("text"), p.Get("parse_mode"))
	if apiErr != nil {
		return "", nil, nil, apiErr
	}
	kb, apiErr := keyboard(p.Get("reply_markup"))
	if apiErr != nil {
		return "", nil, nil, apiErr
	}
	if len(kb) == 0 {
		kb = nil
	}
	return shown, ents, kb, nil
}

func (s *Server) sendMessage(p url.Values) (any, *apiError) {
	chatID, err := parseInt(p.Get("chat_id"))
	if err != nil {
		return nil, badRequest("chat not found")
	}
	if s.strangers[chatID] {
		return nil, &apiError{code: 403, description: "Forbidden: bot can't initiate conversation with a user"}
	}
	shown, ents, kb, apiErr := content(p)
	if apiErr != nil {
		return nil, apiErr
	}
	c := s.chat(chatID, map[string]any{"id": chatID, "type": "private"})
	replyTo, _ := strconv.Atoi(p.Get("reply_to_message_id"))
	c.nextID++
	m := &Message{ID: c.nextID, ChatID: chatID, From: s.bot, Text: shown, Entities: ents, ParseMode: p.Get("parse_mode"), Buttons: kb, ReplyTo: replyTo}
	c.messages = append(c.messages, m)
	return s.wire(c, m), nil
}

// find returns the chat's message named by chat_id and message_id.
func (s *Server) find(p url.Values, notFound string) (*chatState, *Message, *apiError) {
	chatID, err := parseInt(p.Get("chat_id"))
	if err != nil {
		return nil, nil, badRequest("chat not found")
	}
	id, _ := strconv.Atoi(p.Get("message_id"))
	c := s.chats[chatID]
	if c == nil {
		return nil, nil, badRequest("chat not found")
	}
	for _, m := range c.messages {
		if m.ID == id && !m.Deleted {
			return c, m, nil
		}
	}
	return nil, nil, badRequest(notFound)
}

func (s *Server) editMessageText(p url.Values) (any, *apiError) {
	c, m, apiErr := s.find(p, "message to edit not found")
	if apiErr != nil {
		return nil, apiErr
	}
	if m.From.ID != s.bot.ID {
		return nil, badRequest("message can't be edited")
	}
	shown, ents, kb, apiErr := content(p)
	if apiErr != nil {
		return nil, apiErr
	}
	if shown == m.Text && sameKeyboard(kb, m.Buttons) {
		return nil, &apiError{code: 400, description: notModified}
	}
	m.Text, m.Entities, m.ParseMode, m.Buttons = shown, ents, p.Get("parse_mode"), kb
	m.Edits++
	return s.wire(c, m), nil
}

func (s *Server) editMessageReplyMarkup(p url.Values) (any, *apiError) {
	c, m, apiErr := s.find(p, "message to edit not found")
	if apiErr != nil {
		return nil, apiErr
	}
	kb, apiErr := keyboard(p.Get("reply_markup"))
	if apiErr != nil {
		return nil, apiErr
	}
	if len(kb) == 0 {
		kb = nil
	}
	if sameKeyboard(kb, m.Buttons) {
		return nil, &apiError{code: 400, description: notModified}
	}
	m.Buttons = kb
	m.Edits++
	return s.wire(c, m), nil
}

func (s *Server) deleteMessage(p url.Values) (any, *apiError) {
	_, m, apiErr := s.find(p, "message to delete not found")
	if apiErr != nil {
		return nil, apiErr
	}
	m.Deleted = true
	return true, nil
}

func sameKeyboard(a, b [][]Button) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func parseInt(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
