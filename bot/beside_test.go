package bot_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"troupe/models/testenv"
)

// besideWatch holds a turn's store of its user message until the reads
// that need not wait for it — the branch up to the old head, the kept
// recall blocks, recall's search — have run, or until a deadline: reads
// made after the store would never come while it is held.
type besideWatch struct {
	oldHead string
	armed   atomic.Bool
	mu      sync.Mutex
	seen    map[string]bool
	all     chan struct{}
	// inVain: the store waited out the deadline; missing names what had
	// not run by then.
	inVain  atomic.Bool
	missing string
}

var besideReads = []string{"branch", "kept", "recall search"}

func watchBeside(t *testing.T, db *gorm.DB, oldHead string) *besideWatch {
	t.Helper()
	w := &besideWatch{oldHead: oldHead, seen: map[string]bool{}, all: make(chan struct{})}
	note := func(tx *gorm.DB) {
		if !w.armed.Load() || tx.Error != nil {
			return
		}
		sql := strings.TrimSpace(tx.Statement.SQL.String())
		var name string
		switch {
		case strings.Contains(sql, "WITH RECURSIVE branch") && strings.Contains(fmt.Sprint(tx.Statement.Vars...), oldHead):
			name = "branch"
		case strings.HasPrefix(sql, "SELECT") && strings.Contains(sql, "FROM recall_kepts"):
			name = "kept"
		case strings.Contains(sql, "FROM recall_terms") && (strings.Contains(sql, "unnest(") || strings.Contains(sql, "json_each(")):
			name = "recall search"
		default:
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.seen[name] = true
		if len(w.seen) == len(besideReads) {
			select {
			case <-w.all:
			default:
				close(w.all)
			}
		}
	}
	var held atomic.Bool
	hold := func(tx *gorm.DB) {
		// SQLite stores the messages with a create in the head's
		// transaction, PostgreSQL in the head's one statement. Only the
		// first store is held: the user's message, not the reply.
		if !w.armed.Load() || (tx.Statement.Table != "messages" && !strings.Contains(tx.Statement.SQL.String(), "INSERT INTO messages")) ||
			!held.CompareAndSwap(false, true) {
			return
		}
		select {
		case <-w.all:
		case <-time.After(5 * time.Second):
			w.mu.Lock()
			var missing []string
			for _, n := range besideReads {
				if !w.seen[n] {
					missing = append(missing, n)
				}
			}
			w.missing = strings.Join(missing, ", ")
			w.mu.Unlock()
			w.inVain.Store(true)
		}
	}
	cb := db.Callback()
	must(t, cb.Query().After("gorm:query").Register("test:beside_query", note))
	must(t, cb.Row().After("gorm:row").Register("test:beside_row", note))
	must(t, cb.Raw().After("gorm:raw").Register("test:beside_raw", note))
	must(t, cb.Create().Before("gorm:create").Register("test:beside_hold_create", hold))
	must(t, cb.Raw().Before("gorm:raw").Register("test:beside_hold_raw", hold))
	return w
}

// TestPromptReadsRunBesideTheStore: in a one-card chat, the reply's
// branch up to the chat's old head, the recall blocks kept for it and
// recall's search are read while the new message is stored, not after: the
// store is held until all three have run. The prompt is the one a read
// after the store gives: the history with the new message once, last, and
// the last turn's prompt as its prefix up to the turn's block.
func TestPromptReadsRunBesideTheStore(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			r := newRecallRig(t, b, 1)
			keptStory(t, r, "bs", "brass compass", "Juniper")
			ask := "Where did I bury the brass compass?"
			r.say(t, "bs", 4, "Ada", ask)
			first := lastChatPrompt(t, r.fake)
			if !strings.Contains(recallBlock(t, r.fake), "brass compass") {
				t.Fatal("the question recalled no compass: nothing would be kept")
			}

			r.st.StopMaintenance() // its statements race with the hooks' registration
			w := watchBeside(t, r.st.DB(), currentChat(t, r.st, "console:bs").HeadID)
			w.armed.Store(true)
			again := "Is the brass compass still under the oak?"
			r.say(t, "bs", 5, "Ada", again)
			w.armed.Store(false)
			if w.inVain.Load() {
				t.Errorf("the store waited 5 s for reads that had not run: %s", w.missing)
			}

			next := lastChatPrompt(t, r.fake)
			last := len(next) - 1
			for last > 0 && next[last].Role != "user" {
				last--
			}
			if !strings.Contains(next[last].Content, again) {
				t.Errorf("the prompt's last user message is %q, want the new one", next[last].Content)
			}
			for _, text := range []string{ask, again} {
				if n := messagesWith(next, "user", text); n != 1 {
					t.Errorf("%q is in the prompt %d times, want once", text, n)
				}
			}
			// The last prompt, up to its turn block, begins this one: its
			// kept block stands where it stood.
			block := indexOfUser(t, first, ask) - 1
			if first[block].Role != "system" || !strings.Contains(first[block].Content, "[Remembered]") {
				t.Fatalf("no recall block before the question in the first prompt: %+v", first[block])
			}
			for i := range block {
				if i >= len(next) || next[i] != first[i] {
					t.Fatalf("message %d differs from the last prompt's", i)
				}
			}
			if !strings.HasPrefix(next[block].Content, strings.SplitN(first[block].Content, "\n\n[", 2)[0]) {
				t.Errorf("the kept block is not in its place:\n%s", next[block].Content)
			}
		})
	}
}
