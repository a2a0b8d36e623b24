package discordtest

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// frame is a gateway payload.
type frame struct {
	Op int             `json:"op"`
	S  int64           `json:"s"`
	T  string          `json:"t"`
	D  json.RawMessage `json:"d"`
}

type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.srv.URL, "http")+"/gateway/?v=10&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	c := &client{t: t, ws: ws}
	if f := c.read(); f.Op != opHello {
		t.Fatalf("first frame op %d, want HELLO", f.Op)
	}
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	if err := c.ws.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) read() frame {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	var f frame
	if err := c.ws.ReadJSON(&f); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return f
}

func TestGatewayIdentifyHeartbeatResumeReplay(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Options{})
	g := s.AddGuild("Hall")
	ch := s.AddChannel(g, "roleplay")
	c := dial(t, s)
	c.send(obj{"op": opIdentify, "d": obj{"token": "Bot " + s.Token(), "intents": 37377, "properties": obj{"os": "linux"}}})
	ready := c.read()
	var r discordgo.Ready
	if ready.T != "READY" || ready.S != 1 || json.Unmarshal(ready.D, &r) != nil || r.SessionID == "" || r.User.ID != s.Bot().ID {
		t.Fatalf("READY = %+v", ready)
	}
	if f := c.read(); f.T != "GUILD_CREATE" || f.S != 2 {
		t.Fatalf("after READY got %s (s=%d), want GUILD_CREATE", f.T, f.S)
	}
	c.send(obj{"op": opHeartbeat, "d": 2})
	if f := c.read(); f.Op != opHeartbeatACK {
		t.Fatalf("heartbeat answered op %d", f.Op)
	}
	u := User{ID: s.NewID(), Username: "ada"}
	s.Post(Post{ChannelID: ch, Author: u, Content: "one"})
	if f := c.read(); f.T != "MESSAGE_CREATE" || f.S != 3 {
		t.Fatalf("got %s s=%d, want MESSAGE_CREATE s=3", f.T, f.S)
	}
	s.Drop(4000)
	s.Post(Post{ChannelID: ch, Author: u, Content: "two"})
	s.Post(Post{ChannelID: ch, Author: u, Content: "three"})

	c2 := dial(t, s)
	c2.send(obj{"op": opResume, "d": obj{"token": "Bot " + s.Token(), "session_id": r.SessionID, "seq": 3}})
	var got []string
	for {
		f := c2.read()
		if f.T == "RESUMED" {
			if f.S != 6 {
				t.Errorf("RESUMED s=%d, want 6", f.S)
			}
			break
		}
		var m discordgo.Message
		if err := json.Unmarshal(f.D, &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Content)
	}
	if strings.Join(got, ",") != "two,three" {
		t.Errorf("replayed %v, want the two missed messages", got)
	}
	if s.Resumes() != 1 || len(s.Identifies()) != 1 || s.Heartbeats() != 1 {
		t.Errorf("resumes %d, identifies %d, heartbeats %d", s.Resumes(), len(s.Identifies()), s.Heartbeats())
	}
}

func TestRateLimitAnswersLikeDiscord(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Options{})
	g := s.AddGuild("Hall")
	ch := s.AddChannel(g, "roleplay")
	s.RateLimit("POST /channels/*/messages", 1, 1500*time.Millisecond)
	post := func() *http.Response {
		req, _ := http.NewRequest("POST", s.URL()+"api/v10/channels/"+ch+"/messages", strings.NewReader(`{"content":"hi"}`))
		req.Header.Set("Authorization", "Bot "+s.Token())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post()
	var body discordgo.TooManyRequests
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 429 || body.RetryAfter != 1500*time.Millisecond || resp.Header.Get("Retry-After") != "2" ||
		resp.Header.Get("X-RateLimit-Reset-After") != "1.500" || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 answer: status %d, retry_after %v, headers %v", resp.StatusCode, body.RetryAfter, resp.Header)
	}
	resp = post()
	resp.Body.Close()
	if resp.StatusCode != 200 || len(s.Messages(ch)) != 1 {
		t.Errorf("second post: status %d, messages %d", resp.StatusCode, len(s.Messages(ch)))
	}
	if calls := s.CallsTo("POST /channels/*/messages"); len(calls) != 2 || calls[0].Status != 429 {
		t.Errorf("recorded calls %+v", calls)
	}
}

func TestSamplePayloadsDecodeWithDiscordgo(t *testing.T) {
	t.Parallel()
	fsys := os.DirFS("../testdata")
	targets := map[string]any{
		"gateway/ready.json":                    &discordgo.Ready{},
		"gateway/guild_create.json":             &discordgo.GuildCreate{},
		"gateway/thread_create.json":            &discordgo.ThreadCreate{},
		"gateway/message_create.json":           &discordgo.MessageCreate{},
		"gateway/message_update.json":           &discordgo.MessageUpdate{},
		"gateway/interaction_command.json":      &discordgo.InteractionCreate{},
		"gateway/interaction_autocomplete.json": &discordgo.InteractionCreate{},
		"gateway/interaction_component.json":    &discordgo.InteractionCreate{},
	}
	for name, target := range targets {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		var f frame
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal(f.D, target); err != nil {
			t.Errorf("%s does not decode: %v", name, err)
		}
	}
	for _, name := range []string{"rest/message.json", "rest/webhook.json", "rest/user.json", "rest/application_command.json", "rest/gateway_bot.json"} {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
