package bot_test

import (
	"context"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"troupe/bot"
	"troupe/config"
)

// TestTurnStatementCountRecorderOn counts a steady-state turn's statements
// with the recorder on: the plain events and presence ride in the same
// writes (one statement each on PostgreSQL, three more statements inside
// each SQLite transaction), plus the scene's read and the count of turns
// waiting — a constant number, whatever the message's length.
func TestTurnStatementCountRecorderOn(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r, _ := rigOn(t, b)
			ctx := context.Background()
			p := bot.New(bot.Options{Store: r.st, Cards: r.p.Cards(), Model: r.client, MemoryConfig: config.Default().Memory,
				Memory: r.mem, Recorder: config.Recorder{Enabled: true, Batch: 6}})
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
			for i := 2; i <= 4; i++ {
				n.Store(0)
				in := inbound("count", i)
				in.Text += " " + `"A line." *An action.* "Another line." *And one more.*`
				must(t, handle(ctx, p, in, &discardSink{}))
				limit := int32(7)
				if r.st.Dialect() != "postgres" {
					limit = 17
				}
				t.Logf("%s: %d statements in a turn with the recorder on", r.st.Dialect(), n.Load())
				if got := n.Load(); got > limit {
					t.Errorf("a turn ran %d statements with the recorder on, want at most %d", got, limit)
				}
			}
		})
	}
}
