package discordtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// gateway is the websocket side: sessions with their sequence and the
// dispatches sent in them, for replay on RESUME.
type gateway struct {
	// mu orders sequence numbers and writes.
	mu         sync.Mutex
	sessions   map[string]*session
	current    *session
	conns      []*conn
	identifies []Identify
	resumes    int
	heartbeats int
	changed    chan struct{}
}

type session struct {
	id   string
	seq  int64
	log  []sent
	conn *conn
}

type sent struct {
	seq int64
	raw []byte
}

type conn struct {
	ws   *websocket.Conn
	sess *session
	dead bool
}

// Identify is an IDENTIFY the client sent.
type Identify struct {
	Intents int
	Shard   [2]int
	Query   string
}

// serveGateway upgrades to the gateway websocket and speaks the protocol.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	s.gw.mu.Lock()
	s.gw.conns = append(s.gw.conns, c)
	hello := s.sample("gateway/hello")
	hello["d"].(obj)["heartbeat_interval"] = s.opt.HeartbeatInterval.Milliseconds()
	s.writeLocked(c, hello)
	s.gw.mu.Unlock()
	defer s.detach(c)
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(raw, &p) != nil {
			ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "Error while decoding payload."), time.Now().Add(time.Second))
			return
		}
		switch p.Op {
		case opHeartbeat:
			s.gw.mu.Lock()
			s.gw.heartbeats++
			s.writeLocked(c, obj{"op": opHeartbeatACK, "d": nil})
			s.gw.mu.Unlock()
		case opIdentify:
			if !s.identify(c, p.D, r.URL.RawQuery) {
				return
			}
		case opResume:
			s.resume(c, p.D)
		}
	}
}

func (s *Server) detach(c *conn) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	c.dead = true
	if c.sess != nil && c.sess.conn == c {
		c.sess.conn = nil
	}
	c.ws.Close()
	s.notifyLocked()
}

// writeLocked sends v on c; s.gw.mu must be held.
func (s *Server) writeLocked(c *conn, v any) {
	if c == nil || c.dead {
		return
	}
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.ws.WriteJSON(v); err != nil {
		c.dead = true
	}
}

func (s *Server) identify(c *conn, d json.RawMessage, query string) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
		Shard   *[2]int
	}
	_ = json.Unmarshal(d, &id)
	if strings.TrimPrefix(id.Token, "Bot ") != s.opt.Token {
		c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
		return false
	}
	shard := [2]int{0, 1}
	if id.Shard != nil {
		shard = *id.Shard
	}
	sess := &session{id: newSessionID(), conn: c}

	ready := s.sample("gateway/ready")["d"].(obj)
	ready["user"] = s.userJSON(s.bot)
	ready["session_id"] = sess.id
	ready["resume_gateway_url"] = "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway"
	ready["application"].(obj)["id"] = s.bot.ID
	ready["shard"] = []int{shard[0], shard[1]}
	s.mu.Lock()
	var unavailable []obj
	var creates []obj
	for _, gid := range s.guildOrder {
		unavailable = append(unavailable, obj{"id": gid, "unavailable": true})
		creates = append(creates, s.guildJSONLocked(s.guilds[gid]))
	}
	s.mu.Unlock()
	if unavailable == nil {
		unavailable = []obj{}
	}
	ready["guilds"] = unavailable

	s.gw.mu.Lock()
	c.sess = sess
	s.gw.identifies = append(s.gw.identifies, Identify{Intents: id.Intents, Shard: shard, Query: query})
	s.gw.sessions[sess.id] = sess
	s.gw.current = sess
	s.dispatchLocked(sess, "READY", ready)
	for _, g := range creates {
		s.dispatchLocked(sess, "GUILD_CREATE", g)
	}
	s.notifyLocked()
	s.gw.mu.Unlock()
	return true
}

func (s *Server) guildJSONLocked(g *guild) obj {
	o := s.sample("gateway/guild_create")["d"].(obj)
	o["id"], o["name"] = g.id, g.name
	o["roles"] = rolesJSONLocked(g)
	channels, threads := []obj{}, []obj{}
	for _, id := range g.channels {
		c := *s.channels[id]
		if c.IsThread() {
			threads = append(threads, s.channelJSON(c))
		} else {
			ch := s.channelJSON(c)
			delete(ch, "guild_id")
			channels = append(channels, ch)
		}
	}
	o["channels"], o["threads"] = channels, threads
	return o
}

func (s *Server) resume(c *conn, d json.RawMessage) {
	var r struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &r)
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	sess, ok := s.gw.sessions[r.SessionID]
	if !ok || strings.TrimPrefix(r.Token, "Bot ") != s.opt.Token {
		s.writeLocked(c, obj{"op": opInvalidSession, "d": false})
		return
	}
	if old := sess.conn; old != nil && old != c {
		old.dead = true
		old.ws.Close()
	}
	sess.conn = c
	c.sess = sess
	s.gw.resumes++
	s.gw.current = sess
	for _, e := range sess.log {
		if e.seq > r.Seq {
			if c.dead {
				break
			}
			c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if err := c.ws.WriteMessage(websocket.TextMessage, e.raw); err != nil {
				c.dead = true
			}
		}
	}
	s.dispatchLocked(sess, "RESUMED", s.sample("gateway/resumed")["d"])
	s.notifyLocked()
}

// dispatch sends an event to the current session (or, while it is
// disconnected, keeps it for the resume).
func (s *Server) dispatch(name string, d any) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	if s.gw.current == nil {
		return
	}
	s.dispatchLocked(s.gw.current, name, d)
}

func (s *Server) dispatchLocked(sess *session, name string, d any) {
	sess.seq++
	raw, err := json.Marshal(obj{"op": opDispatch, "t": name, "s": sess.seq, "d": d})
	if err != nil {
		panic("discordtest: marshal " + name + ": " + err.Error())
	}
	sess.log = append(sess.log, sent{seq: sess.seq, raw: raw})
	c := sess.conn
	if c == nil || c.dead {
		return
	}
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.ws.WriteMessage(websocket.TextMessage, raw); err != nil {
		c.dead = true
	}
}

// notifyLocked wakes everyone waiting for a gateway change.
func (s *Server) notifyLocked() {
	if s.gw.changed != nil {
		close(s.gw.changed)
	}
	s.gw.changed = make(chan struct{})
}

// Drop closes the current gateway connection from the server's side with a
// close code (4000, "Unknown error", lets the client resume). Events
// dispatched until the client resumes are replayed then.
func (s *Server) Drop(code int) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	if s.gw.current == nil || s.gw.current.conn == nil {
		return
	}
	c := s.gw.current.conn
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, "dropped by discordtest"), time.Now().Add(time.Second))
	c.dead = true
	c.ws.Close()
	s.gw.current.conn = nil
	s.notifyLocked()
}

// Connected reports whether a session is identified and connected.
func (s *Server) Connected() bool {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.current != nil && s.gw.current.conn != nil && !s.gw.current.conn.dead
}

// WaitConnected waits until a session is identified (or resumed) and
// connected, failing the test after timeout.
func (s *Server) WaitConnected(timeout time.Duration) {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		s.gw.mu.Lock()
		ok := s.gw.current != nil && s.gw.current.conn != nil && !s.gw.current.conn.dead
		if s.gw.changed == nil {
			s.gw.changed = make(chan struct{})
		}
		ch := s.gw.changed
		s.gw.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			s.t.Fatalf("discordtest: no gateway session after %v", timeout)
		}
	}
}

// Identifies returns the IDENTIFY payloads received.
func (s *Server) Identifies() []Identify {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return append([]Identify(nil), s.gw.identifies...)
}

// Resumes counts the successful RESUMEs.
func (s *Server) Resumes() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.resumes
}

// Heartbeats counts the heartbeats received (each was acknowledged).
func (s *Server) Heartbeats() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.heartbeats
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
