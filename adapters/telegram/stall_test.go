package telegram

import (
	"sync/atomic"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
)

var carol = telegramtest.User{ID: 1003, FirstName: "Carol", UserName: "carol", LanguageCode: "en"}

// testClock is a clock a test moves by hand.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Unix(1_700_000_000, 0).UnixNano())
	return c
}

func (c *testClock) now() time.Time        { return time.Unix(0, c.ns.Load()) }
func (c *testClock) add(d time.Duration)   { c.ns.Add(int64(d)) }
func floods(calls []telegramtest.Call) int { return countCode(calls, 429) }

func countCode(calls []telegramtest.Call, code int) int {
	n := 0
	for _, c := range calls {
		if c.Code == code {
			n++
		}
	}
	return n
}

// settled waits until the updates ids were taken and handled: polled past
// and no longer pending.
func (h *harness) settled(ids ...int) {
	h.t.Helper()
	waitFor(h.t, "the updates handled", func() bool {
		st := h.inboxState()
		for _, id := range ids {
			if st.Next <= id {
				return false
			}
			for _, u := range st.Pending {
				if u.UpdateID == id {
					return false
				}
			}
		}
		return true
	})
}

// Three /help in a group whose getChatMember and sendMessage are under
// flood control (30 s) hold up that group alone: an unrelated private
// chat's reply comes as fast as ever.
func TestGroupFloodDoesNotDelayAnotherChat(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.AllowGroups = true
	h.start()
	group := telegramtest.Chat{ID: -1009876543210, Title: "Flooded hall"}
	// Bob's right in the group is asked now, and remembered.
	h.tg.SendGroupText(group, bob, "/help", 0)
	h.waitText(group.ID, "Commands:")
	const flood = 30
	for range 10 {
		h.tg.Fail("getChatMember", telegramtest.TooManyRequests(flood).InChat(group.ID))
		h.tg.Fail("sendMessage", telegramtest.TooManyRequests(flood).InChat(group.ID))
	}
	// Bob's answer meets flood control on sendMessage; Carol's right meets
	// it on getChatMember, and her second /help waits behind the first.
	h.tg.SendGroupText(group, bob, "/help", 0)
	h.tg.SendGroupText(group, carol, "/help", 0)
	h.tg.SendGroupText(group, carol, "/help", 0)
	waitFor(t, "getChatMember flood-waited", func() bool { return floods(h.chatCalls("getChatMember", group.ID)) > 0 })

	id, _ := h.tg.SendText(alice, "anyone there?")
	h.waitText(alice.ID, `You said "anyone there?"`)
	served, ok := h.tg.Served(id)
	if !ok {
		t.Fatal("the private message was answered but never served")
	}
	reply := h.chatCalls("sendMessage", alice.ID)[0].At
	if d := reply.Sub(served); d >= time.Second {
		t.Errorf("the private reply came %v after its update was served; want under 1 s while the group waits out %d s", d, flood)
	}
	waitFor(t, "sendMessage flood-waited in the group", func() bool { return floods(h.chatCalls("sendMessage", group.ID)) > 0 })
	if n := h.count(group.ID, "Commands:"); n != 1 {
		t.Errorf("group answers: got %d, want only the one before the flood", n)
	}
}

// A member's right to manage a group is asked once a minute at most.
func TestPermissionAnswerRemembered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.AllowGroups = true
	clk := newTestClock()
	h.tune = func(a *Adapter) { a.now = clk.now }
	h.start()
	group := telegramtest.Chat{ID: -1005550000001, Title: "Hall"}
	h.tg.SetAdmin(group.ID, bob.ID)
	for range 3 {
		h.tg.SendGroupText(group, bob, "/help", 0)
	}
	waitFor(t, "three answers", func() bool { return h.count(group.ID, "Commands:") == 3 })
	if n := len(h.chatCalls("getChatMember", group.ID)); n != 1 {
		t.Errorf("getChatMember calls for three commands in a row: got %d, want 1", n)
	}
	clk.add(permTTL + time.Second)
	h.tg.SendGroupText(group, bob, "/help", 0)
	waitFor(t, "a fourth answer", func() bool { return h.count(group.ID, "Commands:") == 4 })
	if n := len(h.chatCalls("getChatMember", group.ID)); n != 2 {
		t.Errorf("getChatMember calls after the answer expired: got %d, want 2", n)
	}
	h.tg.SendGroupText(group, carol, "/help", 0)
	waitFor(t, "a fifth answer", func() bool { return h.count(group.ID, "Commands:") == 5 })
	if n := len(h.chatCalls("getChatMember", group.ID)); n != 3 {
		t.Errorf("getChatMember calls for another member: got %d, want 3", n)
	}
}

// /help, /start and a card button take the user's rate like a message.
func TestEveryCommandAndButtonIsRateLimited(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "lantern-keeper", "tea-house")
	h.limits.PerMinute = 1
	clk := newTestClock()
	h.now = clk.now
	h.start()
	const slowDown = "writing faster than the character can keep up"

	first, _ := h.tg.SendText(alice, "/start")
	kb := h.waitText(alice.ID, "Choose a character")
	help, _ := h.tg.SendText(alice, "/help")
	h.waitText(alice.ID, slowDown)
	press := h.tg.Press(alice, alice.ID, kb.ID, kb.Buttons[1][0].Data)
	again, _ := h.tg.SendText(alice, "/start")
	h.settled(first, help, press, again)

	clk.add(time.Minute)
	h.tg.SendText(alice, "/help")
	h.waitText(alice.ID, "Commands:")
	if n := h.count(alice.ID, "Commands:"); n != 1 {
		t.Errorf("/help answers: got %d, want 1 (the one after the minute)", n)
	}
	if n := h.count(alice.ID, "Choose a character"); n != 1 {
		t.Errorf("card keyboards: got %d, want 1 (the second /start was over the rate)", n)
	}
	if n := h.count(alice.ID, slowDown); n != 1 {
		t.Errorf("rate notices: got %d, want 1", n)
	}
	if got := h.texts(alice.ID); len(got) != 3 {
		t.Errorf("bot messages: got %q, want the keyboard, one notice and /help's answer (the press chose nothing)", got)
	}
	if msgs := h.messages(alice.ID); len(msgs) != 0 {
		t.Errorf("stored messages: got %d, want none (no card was chosen)", len(msgs))
	}
}
