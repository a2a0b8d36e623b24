package web

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"troupe/models"
)

// maxLiveStreams bounds the live streams one session holds open: a storm
// of tabs costs a few polls, not one per tab.
const maxLiveStreams = 8

// liveHeartbeat is how often an idle stream sends a comment, so proxies
// keep it open and a gone client is noticed.
const liveHeartbeat = 15 * time.Second

// liveStreams counts the open live streams by session id. Session ids are
// random, so one count serves every Server in the process; a session's
// entry goes when its last stream ends.
var liveStreams = struct {
	mu sync.Mutex
	n  map[string]int
}{n: map[string]int{}}

func takeLiveStream(session string) bool {
	liveStreams.mu.Lock()
	defer liveStreams.mu.Unlock()
	if liveStreams.n[session] >= maxLiveStreams {
		return false
	}
	liveStreams.n[session]++
	return true
}

func giveLiveStream(session string) {
	liveStreams.mu.Lock()
	defer liveStreams.mu.Unlock()
	if liveStreams.n[session]--; liveStreams.n[session] <= 0 {
		delete(liveStreams.n, session)
	}
}

// liveChat streams server-sent events for a chat page: a `turn` event
// whenever the chat's head or its number of messages changes (a turn, a
// /regen, a swipe), a comment every liveHeartbeat, and `gone` when the
// chat is forgotten. The bot may run in another process, so the store is
// polled every LivePoll. The stream ends when the client goes.
func (s *Server) liveChat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	last, err := s.opt.Store.ChatPulse(ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		http.Error(w, "no such chat", http.StatusNotFound)
		return
	}
	if err != nil {
		s.log.Error("inspector: live chat", "chat_id", id, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	sess, _ := sessionOf(ctx)
	if !takeLiveStream(sess.id) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many live pages open in this session", http.StatusTooManyRequests)
		return
	}
	defer giveLiveStream(sess.id)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(msg string) bool {
		if _, err := fmt.Fprint(w, msg); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("retry: 5000\n: live\n\n") {
		return
	}
	poll := time.NewTicker(s.opt.LivePoll)
	defer poll.Stop()
	beat := time.NewTicker(liveHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		case <-beat.C:
			if !send(": beat\n\n") {
				return
			}
		case <-poll.C:
			now, err := s.opt.Store.ChatPulse(ctx, id)
			if errors.Is(err, models.ErrNotFound) {
				send("event: gone\ndata: {}\n\n")
				return
			}
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("inspector: live chat", "chat_id", id, "err", err)
				}
				continue
			}
			if now == last {
				continue
			}
			last = now
			// The data holds ids and counts only, never text.
			if !send(fmt.Sprintf("event: turn\ndata: {\"head\":%q,\"messages\":%d}\n\n", now.HeadID, now.Messages)) {
				return
			}
		}
	}
}
