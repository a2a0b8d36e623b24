package models_test

import (
	"context"
	"fmt"
	"testing"

	"troupe/models"
)

// TestOnBranch: a message is on the branch at a head when the head's
// parent links reach it; a reply a /regen replaced with a sibling, the
// greeting another greeting replaced, and the messages after a fork are
// not, however far the branch went on after them.
func TestOnBranch(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:onbranch")
		greeting := chat.HeadID
		add := func(expect, parent, text string) string {
			t.Helper()
			m := &models.Message{Role: "assistant", Content: text}
			must(t, st.Append(ctx, chat.ID, expect, parent, []*models.Message{m}))
			return m.ID
		}
		head := greeting
		var line []string
		for i := range 5 {
			head = add(head, head, fmt.Sprint("turn ", i))
			line = append(line, head)
		}
		replaced := head
		regen := add(head, line[3], "turn 4 again")
		head = regen
		for i := range 40 {
			head = add(head, head, fmt.Sprint("later ", i))
		}
		other := add(head, "", "another greeting")
		for _, c := range []struct {
			name     string
			head, id string
			want     bool
		}{
			{"the head itself", head, head, true},
			{"the greeting, far back", head, greeting, true},
			{"the message the regen forked from", head, line[3], true},
			{"the regenerated reply", head, regen, true},
			{"the replaced reply", head, replaced, false},
			{"the replaced reply, at the regen", regen, replaced, false},
			{"a later message, from before it", line[2], line[3], false},
			{"the first greeting, after another", other, greeting, false},
			{"a message not stored", head, "01NOSUCHMESSAGE0000000000", false},
			{"no message", head, "", false},
		} {
			got, err := st.OnBranch(ctx, c.head, c.id)
			must(t, err)
			if got != c.want {
				t.Errorf("%s: OnBranch = %v, want %v", c.name, got, c.want)
			}
		}
	})
}
