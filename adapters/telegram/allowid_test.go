package telegram

import (
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// telegram.allowed_users matches users by id: a username entry is bound to
// the id of the first user seen with it, so someone who later takes the
// name is refused, and the first user keeps access under a new name.
func TestAllowedUsernameBoundToFirstID(t *testing.T) {
	t.Parallel()
	l := newAllowList([]string{"@Alice", "2002"})
	alice := &tgbotapi.User{ID: 1001, UserName: "alice"}
	if !l.has(alice) {
		t.Fatal("alice, on the list by name, is refused")
	}
	if l.has(&tgbotapi.User{ID: 3003, UserName: "Alice"}) {
		t.Error("another user who took the name alice is let in")
	}
	if !l.has(&tgbotapi.User{ID: 1001, UserName: "alice_renamed"}) {
		t.Error("alice under a new username is refused")
	}
	if !l.has(&tgbotapi.User{ID: 2002}) || l.has(&tgbotapi.User{ID: 4004, UserName: "2002"}) {
		t.Error("an id entry must match that id, and only by id")
	}
}

// A username in allowed_users is warned about at start: names can change.
func TestAllowedUsernameWarnedAtStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "lantern-keeper")
	h.cfg.AllowedUsers = []string{"@alice", "1002"}
	h.start()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(h.logs.String(), "names can change") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning about usernames at start:\n%s", h.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(h.logs.String(), "usernames=alice") {
		t.Errorf("the warning does not name the username:\n%s", h.logs.String())
	}
}
