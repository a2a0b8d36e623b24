// Package discordtest is a fake Discord for tests: the REST API (v10) and the
// gateway websocket on loopback, speaking Discord's JSON shapes (built from
// sample payloads, by default those in adapters/discord/testdata), so that a
// real client library such as discordgo can be driven against it. It records
// every REST call, can answer chosen routes with 429s, and can drop the
// gateway connection to make the client resume; missed dispatches are
// replayed by sequence number.
//
// A test sets up guilds and channels, connects its client to URL(), waits for
// the session with WaitReady, and then plays users: Post, Edit,
// CreateThread, Command, Autocomplete and Click dispatch gateway events.
//
// It is also the CDN (CDNURL) that serves the files of messages: those a
// test posts with a user's message (Post.Attachments, VoiceMessage) and
// those the client uploads as multipart/form-data, which land on the
// message (Message.Attachments) for assertions.
package discordtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Options configures a Server.
type Options struct {
	// Payloads holds the sample payloads (gateway/*.json, rest/*.json); nil
	// reads the testdata directory next to the test ("testdata", then
	// "../testdata").
	Payloads fs.FS
	// Token is the bot token the server accepts (without "Bot "); empty
	// means "test-token".
	Token string
	// HeartbeatInterval is sent in HELLO; zero means 41.25 s, Discord's.
	HeartbeatInterval time.Duration
	// Echo sends MESSAGE_CREATE / MESSAGE_UPDATE / MESSAGE_DELETE for the
	// messages the client itself writes, as Discord does.
	Echo bool
	// UploadLimit is how many bytes of files one message may carry; 0
	// means UploadLimit (10 MiB). Larger uploads get 413 with code 40005.
	UploadLimit int
}

// Server is a fake Discord. Its methods are safe for concurrent use.
type Server struct {
	t        testing.TB
	opt      Options
	srv      *httptest.Server
	payloads map[string][]byte
	upgrader websocket.Upgrader
	start    time.Time

	mu           sync.Mutex
	next         uint64
	bot          User
	guilds       map[string]*guild
	guildOrder   []string
	channels     map[string]*Channel
	messages     map[string]*Message
	order        []string
	webhooks     map[string]*webhook
	noWebhooks   map[string]bool
	interactions map[string]*interaction
	commands     map[string][]json.RawMessage
	calls        []Call
	limits       []*limit
	// files are the attachments the CDN serves, by
	// "<channel>/<id>/<filename>"; cdnHits the paths it was asked for.
	files   map[string]Attachment
	cdnHits []string

	gw gateway
}

// User is a Discord user.
type User struct {
	ID         string
	Username   string
	GlobalName string
	Bot        bool
}

// Channel is a guild channel, thread or DM channel.
type Channel struct {
	ID      string
	GuildID string
	// ParentID is a thread's channel (or a channel's category).
	ParentID string
	Name     string
	// Type is Discord's channel type: 0 text, 1 DM, 11 public thread, 12
	// private thread.
	Type int
	// Recipient is the user of a DM channel.
	Recipient User
	// Overwrites are a guild channel's permission overwrites.
	Overwrites []Overwrite
}

// Overwrite is a channel's permission overwrite for a role (Type 0; the
// @everyone role's id is the guild's) or a member (Type 1).
type Overwrite struct {
	ID          string
	Type        int
	Allow, Deny int64
}

// ViewChannel is Discord's VIEW_CHANNEL permission bit.
const ViewChannel int64 = 1 << 10

// IsThread reports whether the channel is a thread.
func (c Channel) IsThread() bool { return c.Type == 10 || c.Type == 11 || c.Type == 12 }

type guild struct {
	id, name string
	channels []string
	roles    []Role
	// everyone is the @everyone role's permissions.
	everyone int64
}

// everyonePermissions are a new guild's @everyone permissions, as Discord
// grants them by default (VIEW_CHANNEL among them).
const everyonePermissions int64 = 2248473465835073

// Role is a guild role.
type Role struct {
	ID, Name    string
	Permissions int64
}

// NewServer starts a fake Discord on loopback and closes it when the test
// ends.
func NewServer(t testing.TB, opt Options) *Server {
	t.Helper()
	if opt.Token == "" {
		opt.Token = "test-token"
	}
	if opt.UploadLimit == 0 {
		opt.UploadLimit = UploadLimit
	}
	if opt.HeartbeatInterval == 0 {
		opt.HeartbeatInterval = 41250 * time.Millisecond
	}
	s := &Server{
		t: t, opt: opt, start: time.Now(),
		next:         1_000_000_000_000_000_000,
		guilds:       map[string]*guild{},
		channels:     map[string]*Channel{},
		messages:     map[string]*Message{},
		webhooks:     map[string]*webhook{},
		noWebhooks:   map[string]bool{},
		interactions: map[string]*interaction{},
		commands:     map[string][]json.RawMessage{},
		upgrader:     websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
	}
	s.gw.sessions = map[string]*session{}
	if err := s.loadPayloads(); err != nil {
		t.Fatalf("discordtest: %v", err)
	}
	id := s.NewID()
	s.bot = User{ID: id, Username: "troupe", Bot: true}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveREST)
	mux.HandleFunc("/gateway", s.serveGateway)
	mux.HandleFunc("/gateway/", s.serveGateway)
	mux.HandleFunc("/cdn/", s.serveFile)
	mux.HandleFunc("/media/", s.serveFile)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, nil, http.StatusNotFound)
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Close drops the gateway connections and stops the server.
func (s *Server) Close() {
	s.gw.mu.Lock()
	for _, c := range s.gw.conns {
		c.ws.Close()
	}
	s.gw.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// URL is the base URL to configure as discord.api_base_url; it ends in "/".
func (s *Server) URL() string { return s.srv.URL + "/" }

// Token is the bot token the server accepts.
func (s *Server) Token() string { return s.opt.Token }

// Bot is the bot's user; its id is also the application id.
func (s *Server) Bot() User { return s.bot }

// AppID is the application's id.
func (s *Server) AppID() string { return s.bot.ID }

// NewID returns a new snowflake-like id.
func (s *Server) NewID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newIDLocked()
}

func (s *Server) newIDLocked() string {
	s.next++
	return strconv.FormatUint(s.next, 10)
}

// AddGuild adds a guild the bot is in, with roles; it returns the guild's id.
// Guilds added before the client identifies arrive as GUILD_CREATE after
// READY.
func (s *Server) AddGuild(name string, roles ...Role) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newIDLocked()
	s.guilds[id] = &guild{id: id, name: name, roles: roles, everyone: everyonePermissions}
	s.guildOrder = append(s.guildOrder, id)
	return id
}

// AddChannel adds a text channel (or, with parentID a thread's parent, a
// thread) to a guild without telling the gateway; it returns its id.
func (s *Server) AddChannel(guildID, name string) string {
	return s.addChannel(Channel{GuildID: guildID, Name: name, Type: 0})
}

// AddDM opens a DM channel between the bot and user; it returns its id.
func (s *Server) AddDM(user User) string {
	return s.addChannel(Channel{Type: 1, Recipient: user})
}

func (s *Server) addChannel(c Channel) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == "" {
		c.ID = s.newIDLocked()
	}
	s.channels[c.ID] = &c
	if g := s.guilds[c.GuildID]; g != nil {
		g.channels = append(g.channels, c.ID)
	}
	return c.ID
}

// Channel returns a channel by id.
func (s *Server) Channel(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return Channel{}, false
	}
	return *c, true
}

// DenyWebhooks makes the bot lack Manage Webhooks in a channel.
func (s *Server) DenyWebhooks(channelID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noWebhooks[channelID] = true
}

func (s *Server) loadPayloads() error {
	fsys := s.opt.Payloads
	if fsys == nil {
		for _, dir := range []string{"testdata", "../testdata"} {
			if _, err := os.Stat(path.Join(dir, "gateway", "ready.json")); err == nil {
				fsys = os.DirFS(dir)
				break
			}
		}
	}
	if fsys == nil {
		return fmt.Errorf("no sample payloads: pass Options.Payloads")
	}
	s.payloads = map[string][]byte{}
	for _, dir := range []string{"gateway", "rest"} {
		names, err := fs.Glob(fsys, dir+"/*.json")
		if err != nil {
			return err
		}
		for _, n := range names {
			b, err := fs.ReadFile(fsys, n)
			if err != nil {
				return err
			}
			s.payloads[strings.TrimSuffix(n, ".json")] = b
		}
	}
	if _, ok := s.payloads["gateway/ready"]; !ok {
		return fmt.Errorf("sample payloads lack gateway/ready.json")
	}
	return nil
}

// obj is a JSON object being built from a sample.
type obj = map[string]any

// sample returns a fresh copy of a sample payload as an object.
func (s *Server) sample(name string) obj {
	b, ok := s.payloads[name]
	if !ok {
		panic("discordtest: no sample payload " + name)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var o obj
	if err := dec.Decode(&o); err != nil {
		panic("discordtest: sample " + name + ": " + err.Error())
	}
	return o
}

// timestamp formats t as Discord does.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, obj{"message": msg, "code": code})
}
