package discord

import (
	"strconv"
	"sync"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
)

// lanes keeps, per Discord channel, the messages on their way to the
// pipeline, in the order the gateway delivered them, and what edits need to
// know about the ones already handed over.
type lanes struct {
	mu sync.Mutex
	m  map[string]*lane
}

type lane struct {
	ls *lanes
	id string
	mu sync.Mutex
	// gone is set when the lane left the map; pushes must find the new one.
	gone bool
	// queue holds messages not yet handed to the pipeline.
	queue []*queued
	// working is true while a goroutine drains the queue.
	working bool
	// seq numbers the messages handed to the pipeline; started is the
	// highest seq whose turn has begun (its sink was called).
	seq, started uint64
	// open holds handed-over messages whose turn has not begun.
	open map[string]*handed
	// latest is each author's latest handed-over message id.
	latest map[string]string
}

// queued is a gateway message, or an edit prepared as a new inbound message.
type queued struct {
	msg  *discordgo.Message
	edit *prepared
}

// prepared is an inbound message ready for the pipeline with its reply.
type prepared struct {
	in bot.Inbound
	pl place
}

type handed struct {
	seq    uint64
	author string
	text   string
	edits  int
	prep   prepared
}

// maxOpen bounds the handed-over messages an edit can still reach.
const maxOpen = 200

func (ls *lanes) get(channelID string) *lane {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[string]*lane{}
	}
	l, ok := ls.m[channelID]
	if !ok {
		l = &lane{ls: ls, id: channelID, open: map[string]*handed{}, latest: map[string]string{}}
		ls.m[channelID] = l
	}
	return l
}

// lookup returns channelID's lane, or nil when there is none.
func (ls *lanes) lookup(channelID string) *lane {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.m[channelID]
}

// push queues q in channelID's lane and returns the lane when the caller
// must start draining it.
func (ls *lanes) push(channelID string, q *queued) *lane {
	for {
		l := ls.get(channelID)
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		l.queue = append(l.queue, q)
		start := !l.working
		l.working = true
		l.mu.Unlock()
		if start {
			return l
		}
		return nil
	}
}

// pop takes the next queued message, or reports that the queue is empty
// (and stops working; a lane with nothing an edit could still reach leaves
// the map).
func (l *lane) pop() (*queued, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) == 0 {
		l.working = false
		if len(l.open) == 0 {
			l.ls.mu.Lock()
			if l.ls.m[l.id] == l {
				delete(l.ls.m, l.id)
			}
			l.ls.mu.Unlock()
			l.gone = true
		}
		return nil, false
	}
	q := l.queue[0]
	l.queue[0] = nil
	l.queue = l.queue[1:]
	return q, true
}

// hand records that prep goes to the pipeline now and returns its seq.
func (l *lane) hand(msgID string, prep prepared) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if msgID != "" {
		if len(l.open) >= maxOpen {
			for id, h := range l.open {
				if h.seq+maxOpen/2 < l.seq {
					delete(l.open, id)
				}
			}
		}
		l.open[msgID] = &handed{seq: l.seq, author: prep.in.AuthorID, text: prep.in.Text, prep: prep}
		l.latest[prep.in.AuthorID] = msgID
	}
	return l.seq
}

// begun records that the turn carrying seq has started: every message handed
// over up to seq is part of it or of an earlier one.
func (l *lane) begun(seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq <= l.started {
		return
	}
	l.started = seq
	for id, h := range l.open {
		if h.seq <= seq {
			delete(l.open, id)
		}
	}
}

// edit applies an edit (raw content, and text as the story sees it) to
// message id: in the queue it replaces the content;
// handed over, not yet in a started turn and its author's latest, it returns
// the edit as a message to queue. Otherwise it returns nil.
func (l *lane) edit(id, raw, text string) *prepared {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.queue {
		if q.msg != nil && q.msg.ID == id {
			q.msg.Content = raw
			return nil
		}
	}
	h, ok := l.open[id]
	if !ok || h.seq <= l.started || l.latest[h.author] != id || h.text == text {
		return nil
	}
	h.text = text
	h.edits++
	prep := h.prep
	prep.in.Text = text
	prep.in.MessageID = editID(id, h.edits)
	return &prep
}

func editID(id string, n int) string {
	return id + "#edit" + strconv.Itoa(n)
}
