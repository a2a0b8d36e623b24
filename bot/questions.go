package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"troupe/models"
)

// Questions keeps the open yes/no questions where every troupe process can
// answer them: a button may be pressed on another replica than the one that
// asked, or after a restart. A question is data, not a closure, so that any
// process can carry it out.
type Questions interface {
	// Put stores a question under token until ttl has passed.
	Put(ctx context.Context, token string, data []byte, ttl time.Duration) error
	// Take removes and returns the question under token; ok is false when
	// there is none (never asked, answered, or expired).
	Take(ctx context.Context, token string) (data []byte, ok bool, err error)
}

// question is a yes/no question waiting for its author's answer.
type question struct {
	// Action is what a yes does: actionForget deletes ChatID.
	Action  string    `json:"action"`
	ChatID  string    `json:"chat_id"`
	UserKey string    `json:"user_key"`
	Channel string    `json:"channel"`
	Expires time.Time `json:"expires"`
}

const actionForget = "forget"

// ConfirmTTL is how long a yes/no question stays open.
const ConfirmTTL = 2 * time.Minute

// localQuestions keeps questions in this process: the default when
// Options.Questions is nil (one process).
type localQuestions struct {
	mu   sync.Mutex
	open map[string]localQuestion
}

type localQuestion struct {
	data    []byte
	expires time.Time
}

func (l *localQuestions) Put(_ context.Context, token string, data []byte, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == nil {
		l.open = map[string]localQuestion{}
	}
	now := time.Now()
	for k, v := range l.open {
		if now.After(v.expires) {
			delete(l.open, k)
		}
	}
	l.open[token] = localQuestion{data: data, expires: now.Add(ttl)}
	return nil
}

func (l *localQuestions) Take(_ context.Context, token string) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q, ok := l.open[token]
	delete(l.open, token)
	if !ok || time.Now().After(q.expires) {
		return nil, false, nil
	}
	return q.data, true, nil
}

// ask puts a yes/no question to the author of in: with buttons when the sink
// can, else as a notice answered by the next message.
func (cm *commands) ask(ctx context.Context, in Inbound, text string, sink Sink, q question) error {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	q.UserKey, q.Channel, q.Expires = in.UserKey(), in.Channel.Key(), cm.p.opt.Now().Add(ConfirmTTL)
	data, err := json.Marshal(q)
	if err == nil {
		err = cm.p.opt.Questions.Put(ctx, token, data, ConfirmTTL)
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "ask", err)
	}
	if c, ok := sink.(Confirmer); ok {
		return c.Confirm(ctx, text, token, q.Expires)
	}
	return sink.Notice(ctx, text)
}

// answer is Answer.
func (cm *commands) answer(ctx context.Context, in Inbound, token string, yes bool, sink Sink) error {
	lang := cm.p.langOf(in)
	data, ok, err := cm.p.opt.Questions.Take(ctx, token)
	if err != nil {
		return cm.p.internal(ctx, sink, "answer", err)
	}
	var q question
	if ok && json.Unmarshal(data, &q) != nil {
		ok = false
	}
	switch {
	case !ok:
		return sink.Notice(ctx, cm.p.text(lang, msgConfirmGone))
	case q.UserKey != in.UserKey() || q.Channel != in.Channel.Key():
		// Put it back: it is still its author's to answer.
		if left := q.Expires.Sub(cm.p.opt.Now()); left > 0 {
			if err := cm.p.opt.Questions.Put(ctx, token, data, left); err != nil {
				cm.log.Warn("put a question back", "err", err)
			}
		}
		return sink.Notice(ctx, cm.p.text(lang, msgNotYours))
	case cm.p.opt.Now().After(q.Expires):
		return sink.Notice(ctx, cm.p.text(lang, msgConfirmGone))
	case !yes:
		return sink.Notice(ctx, cm.p.text(lang, msgCancelled))
	}
	switch q.Action {
	case actionForget:
		chat, err := cm.store.Chat(ctx, q.ChatID)
		if errors.Is(err, models.ErrNotFound) {
			return sink.Notice(ctx, cm.p.text(lang, msgAlreadyForgotten))
		}
		if err != nil {
			return cm.p.internal(ctx, sink, "forget", err)
		}
		return cm.forget(ctx, in, chat, sink)
	}
	return sink.Notice(ctx, cm.p.text(lang, msgConfirmGone))
}
