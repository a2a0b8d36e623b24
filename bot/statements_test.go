package bot_test

import (
	"context"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"troupe/bot"
	"troupe/config"
)

// TestTurnStatementCount counts the SQL statements of a steady-state turn
// (a message in a chat that exists): storing the message before any wait
// costs one statement, and moving it into the chat shares the head's
// statement, so a turn stays at a handful of round trips on PostgreSQL
// (where each statement below is one).
func TestTurnStatementCount(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r, _ := rigOn(t, b)
			ctx := context.Background()
			p := bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory})
			must(t, handle(ctx, p, inbound("count", 1), &discardSink{}))
			var n atomic.Int32
			count := func(*gorm.DB) { n.Add(1) }
			r.st.StopMaintenance() // its statements are not the turn's, and hooks race with them
			cb := r.st.DB().Callback()
			must(t, cb.Create().After("gorm:create").Register("test:count_create", count))
			must(t, cb.Query().After("gorm:query").Register("test:count_query", count))
			must(t, cb.Update().After("gorm:update").Register("test:count_update", count))
			must(t, cb.Delete().After("gorm:delete").Register("test:count_delete", count))
			must(t, cb.Row().After("gorm:row").Register("test:count_row", count))
			must(t, cb.Raw().After("gorm:raw").Register("test:count_raw", count))
			must(t, handle(ctx, p, inbound("count", 2), &discardSink{}))
			limit := int32(5)
			if r.st.Dialect() != "postgres" {
				// SQLite's appends are transactions of two or three
				// statements, all in process, and each writes its
				// presence (scenes: always on) with one more.
				limit = 11
			}
			t.Logf("%s: %d statements in a turn", r.st.Dialect(), n.Load())
			if got := n.Load(); got > limit {
				t.Errorf("a turn ran %d statements, want at most %d", got, limit)
			}
		})
	}
}
