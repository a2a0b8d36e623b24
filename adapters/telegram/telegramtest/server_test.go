package telegramtest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

func connect(t *testing.T) (*Server, *tgbotapi.BotAPI) {
	t.Helper()
	s := NewServer(t)
	api, err := tgbotapi.NewBotAPIWithAPIEndpoint(s.Token(), s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	return s, api
}

func TestGetMe(t *testing.T) {
	t.Parallel()
	s, api := connect(t)
	if api.Self.UserName != "troupe_test_bot" || api.Self.ID != s.Bot().ID || !api.Self.IsBot {
		t.Errorf("getMe: got %+v", api.Self)
	}
	bad, err := tgbotapi.NewBotAPIWithAPIEndpoint("1:wrong", s.Endpoint())
	var te *tgbotapi.Error
	if bad != nil || !errors.As(err, &te) || te.Code != 401 {
		t.Errorf("wrong token: got %v", err)
	}
}

func TestGetUpdatesOffsetAndTimeout(t *testing.T) {
	t.Parallel()
	s, api := connect(t)
	u := User{ID: 7, FirstName: "Ann"}
	first, _ := s.SendText(u, "/start")
	second, _ := s.SendText(u, "hello @troupe_test_bot")
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0].UpdateID != first || ups[1].UpdateID != second {
		t.Fatalf("updates: got %+v", ups)
	}
	if !ups[0].Message.IsCommand() || ups[0].Message.Command() != "start" || ups[0].Message.Chat.Type != "private" {
		t.Errorf("command message: got %+v", ups[0].Message)
	}
	if ents := ups[1].Message.Entities; len(ents) != 1 || ents[0].Type != "mention" || ents[0].Offset != 6 {
		t.Errorf("mention entity: got %+v", ents)
	}
	// The offset confirms the first; a redelivery below the offset is dropped.
	ups, _ = api.GetUpdates(tgbotapi.UpdateConfig{Offset: second})
	if len(ups) != 1 || ups[0].UpdateID != second {
		t.Errorf("after offset: got %d updates", len(ups))
	}
	s.Redeliver(first)
	ups, _ = api.GetUpdates(tgbotapi.UpdateConfig{Offset: second + 1, Timeout: 1})
	if len(ups) != 0 {
		t.Errorf("confirmed updates came back: %+v", ups)
	}
	// A long poll returns as soon as an update arrives.
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.SendText(u, "late")
	}()
	start := time.Now()
	ups, _ = api.GetUpdates(tgbotapi.UpdateConfig{Offset: second + 1, Timeout: 10})
	if len(ups) != 1 || ups[0].Message.Text != "late" || time.Since(start) > 5*time.Second {
		t.Errorf("long poll: got %d updates after %v", len(ups), time.Since(start))
	}
}

func TestErrorShapesMatchTelegram(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	tests := []struct {
		golden string
		fault  Fault
		params url.Values
	}{
		{"response_429.json", TooManyRequests(1), url.Values{"chat_id": {"1"}, "text": {"x"}}},
		{"response_not_modified.json", NotModified(), url.Values{"chat_id": {"1"}, "text": {"x"}}},
		{"response_cant_parse.json", CantParseEntities(), url.Values{"chat_id": {"1"}, "text": {"x"}, "parse_mode": {"HTML"}}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			s.Fail("sendMessage", tt.fault)
			resp, err := http.PostForm(strings.Replace(strings.Replace(s.Endpoint(), "%s", s.Token(), 1), "%s", "sendMessage", 1), tt.params)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want, err := os.ReadFile(filepath.Join("..", "testdata", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			var got, exp any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &exp); err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			ej, _ := json.Marshal(exp)
			if string(gj) != string(ej) {
				t.Errorf("body:\ngot  %s\nwant %s", gj, ej)
			}
			if resp.StatusCode != int(exp.(map[string]any)["error_code"].(float64)) {
				t.Errorf("status: got %d", resp.StatusCode)
			}
		})
	}
}

func TestSendEditDelete(t *testing.T) {
	t.Parallel()
	s, api := connect(t)
	msg := tgbotapi.NewMessage(7, "a &lt; b &amp;&amp; <b>c</b>")
	msg.ParseMode = tgbotapi.ModeHTML
	sent, err := api.Send(msg)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Messages(7)[0].Text; got != "a < b && c" {
		t.Errorf("visible text: got %q", got)
	}
	_, err = api.Send(tgbotapi.NewEditMessageText(7, sent.MessageID, "a < b && c"))
	var te *tgbotapi.Error
	if !errors.As(err, &te) || te.Code != 400 || !strings.Contains(te.Message, "message is not modified") {
		t.Errorf("same text edit: got %v", err)
	}
	if _, err := api.Send(tgbotapi.NewEditMessageText(7, sent.MessageID, "changed")); err != nil {
		t.Errorf("edit: %v", err)
	}
	bad := tgbotapi.NewMessage(7, "x < y")
	bad.ParseMode = tgbotapi.ModeHTML
	if _, err := api.Send(bad); !errors.As(err, &te) || !strings.Contains(te.Message, "can't parse entities") {
		t.Errorf("bad HTML: got %v", err)
	}
	if _, err := api.Request(tgbotapi.NewDeleteMessage(7, sent.MessageID)); err != nil {
		t.Errorf("delete: %v", err)
	}
	if n := len(s.Messages(7)); n != 0 {
		t.Errorf("messages after delete: got %d", n)
	}
	if _, err := api.Send(tgbotapi.NewMessage(7, strings.Repeat("😀", 2049))); !errors.As(err, &te) || te.Message != "Bad Request: message is too long" {
		t.Errorf("4098 UTF-16 units: got %v", err)
	}
}

func TestParseHTML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"plain", "plain", true},
		{"<b>bold</b> &lt;3 &amp; &#8212; &#x41;", "bold <3 & — A", true},
		{`<a href="http://x">link</a>`, "link", true},
		{"a < b", "", false},
		{"a > b", "", false},
		{"Tom & Jerry", "", false},
		{"<x>", "", false},
		{"<b>open", "", false},
		{"<b><i>x</b></i>", "", false},
	}
	for _, tt := range tests {
		got, refused := parseHTML(tt.in)
		if (refused == "") != tt.ok || got != tt.want {
			t.Errorf("parseHTML(%q): got %q, %q", tt.in, got, refused)
		}
	}
}

func TestWebhookBlocksPolling(t *testing.T) {
	t.Parallel()
	_, api := connect(t)
	if _, err := api.MakeRequest("setWebhook", tgbotapi.Params{"url": "https://x.example/hook", "secret_token": "s"}); err != nil {
		t.Fatal(err)
	}
	_, err := api.GetUpdates(tgbotapi.UpdateConfig{})
	var te *tgbotapi.Error
	if !errors.As(err, &te) || te.Code != 409 {
		t.Errorf("getUpdates with a webhook: got %v", err)
	}
	if _, err := api.Request(tgbotapi.DeleteWebhookConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.GetUpdates(tgbotapi.UpdateConfig{}); err != nil {
		t.Errorf("getUpdates after deleteWebhook: %v", err)
	}
}

func TestParseHTMLEntitiesCountUTF16(t *testing.T) {
	t.Parallel()
	shown, ents, refused := parseHTMLEntities("<b>𝓜ara &amp; Co</b>\nsays <i>hi</i>")
	if refused != "" || shown != "𝓜ara & Co\nsays hi" {
		t.Fatalf("shown %q, refused %q", shown, refused)
	}
	want := []Entity{{Type: "bold", Offset: 0, Length: 10}, {Type: "italic", Offset: 16, Length: 2}}
	if len(ents) != len(want) || ents[0] != want[0] || ents[1] != want[1] {
		t.Errorf("entities %+v, want %+v", ents, want)
	}
}

func TestFaultInOneChatAndServedTimes(t *testing.T) {
	t.Parallel()
	s, api := connect(t)
	s.Fail("sendMessage", TooManyRequests(30).InChat(-100))
	if _, err := api.Send(tgbotapi.NewMessage(7, "to the other chat")); err != nil {
		t.Fatalf("a send to another chat was struck: %v", err)
	}
	_, err := api.Send(tgbotapi.NewMessage(-100, "to the flooded chat"))
	var te *tgbotapi.Error
	if !errors.As(err, &te) || te.Code != 429 || te.RetryAfter != 30 {
		t.Fatalf("send to the flooded chat: got %v, want a 429 with retry_after 30", err)
	}
	id, _ := s.SendText(User{ID: 7, FirstName: "Ann"}, "hello")
	if _, ok := s.Served(id); ok {
		t.Fatal("an update was served before getUpdates asked")
	}
	before := time.Now()
	if ups, err := api.GetUpdates(tgbotapi.UpdateConfig{}); err != nil || len(ups) != 1 {
		t.Fatalf("getUpdates: %v, %d updates", err, len(ups))
	}
	first, ok := s.Served(id)
	if !ok || first.Before(before) || first.After(time.Now()) {
		t.Fatalf("served: got %v %v, want during the call", first, ok)
	}
	if _, err := api.GetUpdates(tgbotapi.UpdateConfig{}); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Served(id); !again.Equal(first) {
		t.Errorf("served moved on a second delivery: %v then %v", first, again)
	}
}
