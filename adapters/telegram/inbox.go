package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
)

// inbox is long polling's durable record, one setting row per bot: the next
// update id to ask Telegram for, and the updates taken from Telegram but not
// yet handled. Asking getUpdates for an offset confirms every update below
// it, and Telegram forgets them; so the offset is saved, together with the
// updates it confirms, before it is sent. A restart re-dispatches the
// pending updates (the pipeline ignores messages it already stored) and
// asks for the saved offset: nothing handled is handled again, and nothing
// confirmed is lost.
type inbox struct {
	state bot.Engine
	key   string

	mu  sync.Mutex
	cur inboxState
}

type inboxState struct {
	Next    int               `json:"next"`
	Pending []tgbotapi.Update `json:"pending,omitempty"`
}

// offsetKey is the setting that holds a bot's inbox.
func offsetKey(botID int64) string { return fmt.Sprintf("telegram.updates.%d", botID) }

// load reads the saved state; a bot without one starts from Telegram's
// oldest unconfirmed update.
func (b *inbox) load(ctx context.Context) (inboxState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	raw, err := b.state.AdapterState(ctx, b.key)
	if err == nil && raw == "" {
		b.cur = inboxState{}
		return b.cur, nil
	}
	if err != nil {
		return inboxState{}, fmt.Errorf("telegram: load offset: %w", err)
	}
	var st inboxState
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return inboxState{}, fmt.Errorf("telegram: load offset %s: %w", b.key, err)
	}
	b.cur = st
	return st, nil
}

// accept records ups as pending and next as the offset to ask for. On
// error nothing changed.
func (b *inbox) accept(ctx context.Context, ups []tgbotapi.Update, next int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := inboxState{Next: max(next, b.cur.Next), Pending: append(append([]tgbotapi.Update(nil), b.cur.Pending...), ups...)}
	if err := b.save(ctx, st); err != nil {
		return err
	}
	b.cur = st
	return nil
}

// done removes a handled update.
func (b *inbox) done(ctx context.Context, updateID int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := inboxState{Next: b.cur.Next}
	found := false
	for _, u := range b.cur.Pending {
		if u.UpdateID == updateID {
			found = true
			continue
		}
		st.Pending = append(st.Pending, u)
	}
	if !found {
		return nil
	}
	if err := b.save(ctx, st); err != nil {
		return err
	}
	b.cur = st
	return nil
}

func (b *inbox) save(ctx context.Context, st inboxState) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("telegram: save offset: %w", err)
	}
	if err := b.state.SaveAdapterState(ctx, b.key, string(raw)); err != nil {
		return fmt.Errorf("telegram: save offset: %w", err)
	}
	return nil
}
