// Package telegramtest is a fake Telegram Bot API server for tests. It speaks
// the real wire format on loopback (form-encoded or multipart/form-data
// requests to /bot<token>/<method>, answers shaped {"ok":true,"result":…} or
// {"ok":false,"error_code":…,"description":…}), keeps each chat's messages as
// a Telegram client would show them (HTML parsed, edits applied, deletions
// hidden), long-polls getUpdates with offsets and timeouts, injects faults
// (429 with retry_after, "can't parse entities", "message is not modified"),
// and records every call. Users send photos, documents, voice notes and
// audio whose bytes getFile and the file endpoint
// (/file/bot<token>/<file_path>) serve; the files the bot uploads
// (sendPhoto, sendVoice, sendAudio, sendDocument) are kept on its messages.
package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultToken is the bot token the server accepts.
const DefaultToken = "123456789:AAtelegramtest-token"

// User is a Telegram user as the API shows it.
type User struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	UserName     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
}

// Chat is a group or supergroup a test writes in.
type Chat struct {
	ID    int64
	Title string
	// Type is "group" or "supergroup"; empty means "supergroup".
	Type string
}

// Button is one inline keyboard button.
type Button struct {
	Text string `json:"text"`
	Data string `json:"callback_data,omitempty"`
}

// Message is a message of a chat as a client shows it.
type Message struct {
	ID     int
	ChatID int64
	From   User
	// Text is the visible text: HTML parsed when it was sent as HTML.
	Text string
	// Entities are the formatting of a message sent as HTML.
	Entities []Entity
	// ParseMode is the parse_mode of the last send or edit.
	ParseMode string
	// Buttons is the inline keyboard, nil when there is none.
	Buttons [][]Button
	// ReplyTo is the message this one replies to, 0 for none.
	ReplyTo int
	// Edits counts the edits applied.
	Edits   int
	Deleted bool
	// Kind is "photo", "voice", "audio" or "document" for a message that
	// carries a file, "" for a text message.
	Kind string
	// Caption is a file message's visible caption.
	Caption string
	// File is the file the bot uploaded with the message (sendPhoto,
	// sendVoice, sendAudio, sendDocument); nil otherwise.
	File *Upload
	// Duration is the duration, in seconds, the bot gave a voice or audio
	// file.
	Duration int

	// extra are the message's file fields as the API shows them (photo,
	// voice, caption_entities, …).
	extra map[string]any
}

// Call is one recorded API request.
type Call struct {
	Method string
	Params url.Values
	At     time.Time
	// Code is the error_code answered; 0 means ok.
	Code int
	// Files are the files uploaded with a multipart/form-data request,
	// keyed by form field.
	Files map[string]Upload
}

// BotCommand is a published command.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// Server is a fake Bot API. Its methods are safe for concurrent use.
type Server struct {
	srv       *httptest.Server
	token     string
	bot       User
	done      chan struct{}
	closeOnce sync.Once

	mu            sync.Mutex
	queue         []queued
	delivered     map[int]json.RawMessage
	nextUpdate    int
	wake          chan struct{}
	chats         map[int64]*chatState
	calls         []Call
	faults        map[string][]Fault
	commands      []BotCommand
	webhookURL    string
	webhookSecret string
	admins        map[int64]map[int64]bool
	callbackSeq   int
	// strangers are users who never started a private chat with the bot.
	strangers map[int64]bool
	// served is when getUpdates first answered each update.
	served map[int]time.Time
	// files are the files getFile knows, by file_id; downloads the
	// requests to the file endpoint.
	files     map[string]*storedFile
	fileSeq   int
	downloads []Download
}

type queued struct {
	id  int
	raw json.RawMessage
}

type chatState struct {
	info     map[string]any
	nextID   int
	messages []*Message
}

// NewServer starts a fake Bot API on loopback for a bot named
// @troupe_test_bot and closes it when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		token:      DefaultToken,
		bot:        User{ID: 123456789, IsBot: true, FirstName: "Troupe", UserName: "troupe_test_bot"},
		done:       make(chan struct{}),
		delivered:  map[int]json.RawMessage{},
		nextUpdate: 1000,
		wake:       make(chan struct{}),
		chats:      map[int64]*chatState{},
		faults:     map[string][]Fault{},
		admins:     map[int64]map[int64]bool{},
		served:     map[int]time.Time{},
		files:      map[string]*storedFile{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Endpoint is the API endpoint in the library's format, with two %s for the
// token and the method.
func (s *Server) Endpoint() string { return s.srv.URL + "/bot%s/%s" }

// Token is the bot token the server accepts.
func (s *Server) Token() string { return s.token }

// Bot is the bot's own user, as getMe answers it.
func (s *Server) Bot() User { return s.bot }

// Close stops the server; long polls return at once. Close may be called
// more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Fail queues faults for method: each of the method's next calls that a
// fault applies to is answered with the fault instead of its result.
func (s *Server) Fail(method string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], faults...)
}

// NeverStarted makes user one who never started a private chat with the
// bot: until they write to it, sending to them is refused with 403, as
// Telegram refuses a bot that would start a conversation.
func (s *Server) NeverStarted(userID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.strangers == nil {
		s.strangers = map[int64]bool{}
	}
	s.strangers[userID] = true
}

// SetAdmin makes user an administrator of the group chat.
func (s *Server) SetAdmin(chatID, userID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admins[chatID] == nil {
		s.admins[chatID] = map[int64]bool{}
	}
	s.admins[chatID][userID] = true
}

// Calls returns the recorded calls of method, or of every method when method
// is empty, in arrival order.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Served returns when getUpdates first answered the update, and whether
// it has.
func (s *Server) Served(updateID int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.served[updateID]
	return at, ok
}

// Messages returns the chat's messages written by the bot and not deleted,
// in order.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	if c := s.chats[chatID]; c != nil {
		for _, m := range c.messages {
			if !m.Deleted && m.From.ID == s.bot.ID {
				cp := *m
				out = append(out, cp)
			}
		}
	}
	return out
}

// Commands returns the commands last published with setMyCommands.
func (s *Server) Commands() []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]BotCommand(nil), s.commands...)
}

// Webhook returns the webhook URL and secret token last set, empty when none.
func (s *Server) Webhook() (url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhookURL, s.webhookSecret
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.download(w, r, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeError(w, 404, "Not Found", 0)
		return
	}
	if token != s.token {
		writeError(w, 401, "Unauthorized", 0)
		return
	}
	files, apiErr := parseRequest(w, r)
	if apiErr != nil {
		writeError(w, apiErr.code, apiErr.description, 0)
		return
	}
	params := r.Form
	s.mu.Lock()
	idx := len(s.calls)
	s.calls = append(s.calls, Call{Method: method, Params: params, At: time.Now(), Files: files})
	if f, ok := s.takeFault(method, params); ok {
		s.calls[idx].Code = f.Code
		s.mu.Unlock()
		writeError(w, f.Code, f.Description, f.RetryAfter)
		return
	}
	s.mu.Unlock()

	var result any
	if method == "getUpdates" {
		result, apiErr = s.getUpdates(r, params)
	} else {
		s.mu.Lock()
		result, apiErr = s.call(method, params, files)
		s.mu.Unlock()
	}
	if apiErr != nil {
		s.mu.Lock()
		s.calls[idx].Code = apiErr.code
		s.mu.Unlock()
		writeError(w, apiErr.code, apiErr.description, 0)
		return
	}
	writeResult(w, result)
}

// call answers every method but getUpdates; s.mu is held.
func (s *Server) call(method string, p url.Values, files map[string]Upload) (any, *apiError) {
	switch method {
	case "sendPhoto", "sendVoice", "sendAudio", "sendDocument":
		return s.sendFile(method, p, files)
	case "getFile":
		return s.getFile(p)
	case "getMe":
		return s.bot, nil
	case "sendMessage":
		return s.sendMessage(p)
	case "editMessageText":
		return s.editMessageText(p)
	case "editMessageReplyMarkup":
		return s.editMessageReplyMarkup(p)
	case "deleteMessage":
		return s.deleteMessage(p)
	case "sendChatAction":
		if p.Get("chat_id") == "" || p.Get("action") == "" {
			return nil, badRequest("chat_id and action are required")
		}
		return true, nil
	case "answerCallbackQuery":
		if p.Get("callback_query_id") == "" {
			return nil, badRequest("query_id_invalid")
		}
		return true, nil
	case "setMyCommands":
		var cmds []BotCommand
		if err := json.Unmarshal([]byte(p.Get("commands")), &cmds); err != nil {
			return nil, badRequest("can't parse commands JSON object")
		}
		for _, c := range cmds {
			if c.Command == "" || len(c.Command) > 32 || strings.ToLower(c.Command) != c.Command || len(c.Description) < 1 || len(c.Description) > 256 {
				return nil, badRequest("BOT_COMMAND_INVALID")
			}
		}
		s.commands = cmds
		return true, nil
	case "setWebhook":
		s.webhookURL = p.Get("url")
		s.webhookSecret = p.Get("secret_token")
		return true, nil
	case "deleteWebhook":
		s.webhookURL, s.webhookSecret = "", ""
		return true, nil
	case "getChatMember":
		return s.getChatMember(p)
	}
	return nil, &apiError{code: 404, description: "Not Found"}
}

func (s *Server) getChatMember(p url.Values) (any, *apiError) {
	chatID, err1 := parseInt(p.Get("chat_id"))
	userID, err2 := parseInt(p.Get("user_id"))
	if err1 != nil || err2 != nil {
		return nil, badRequest("chat not found")
	}
	status := "member"
	if s.admins[chatID][userID] {
		status = "administrator"
	}
	return map[string]any{"status": status, "user": map[string]any{"id": userID, "is_bot": false, "first_name": "member"}}, nil
}

// Fault is an error answer injected for one call.
type Fault struct {
	// Code is the error_code (and HTTP status).
	Code int
	// Description is the error's description.
	Description string
	// RetryAfter, when positive, is sent as parameters.retry_after.
	RetryAfter int
	// HTMLOnly makes the fault strike only a request with parse_mode HTML.
	HTMLOnly bool
	// Chat, when not 0, makes the fault strike only a request for that
	// chat_id: flood control in one chat while the others are answered.
	Chat int64
}

// TooManyRequests is Telegram's flood-control answer.
func TooManyRequests(retryAfter int) Fault {
	return Fault{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter}
}

// InChat returns f striking only requests for chat id.
func (f Fault) InChat(id int64) Fault {
	f.Chat = id
	return f
}

// CantParseEntities is the answer to HTML Telegram refuses; it strikes only
// a request sent with parse_mode HTML.
func CantParseEntities() Fault {
	return Fault{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0", HTMLOnly: true}
}

// NotModified is the answer to an edit that changes nothing.
func NotModified() Fault {
	return Fault{Code: 400, Description: notModified}
}

const notModified = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"

// takeFault removes and returns the first queued fault of method that
// applies to a request with params p; s.mu is held.
func (s *Server) takeFault(method string, p url.Values) (Fault, bool) {
	q := s.faults[method]
	for i, f := range q {
		if f.HTMLOnly && !strings.EqualFold(p.Get("parse_mode"), "HTML") {
			continue
		}
		if f.Chat != 0 && p.Get("chat_id") != strconv.FormatInt(f.Chat, 10) {
			continue
		}
		s.faults[method] = append(q[:i:i], q[i+1:]...)
		return f, true
	}
	return Fault{}, false
}

type apiError struct {
	code        int
	description string
}

func badRequest(what string) *apiError {
	return &apiError{code: 400, description: "Bad Request: " + what}
}

func writeResult(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func writeError(w http.ResponseWriter, code int, description string, retryAfter int) {
	body := map[string]any{"ok": false, "error_code": code, "description": description}
	if retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}
