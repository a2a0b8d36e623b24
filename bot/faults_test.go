package bot_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
)

// TestModelFaultsOnTheMainModel: for every kind of model failure the user
// is told briefly, the message is kept, and no reply is stored.
func TestModelFaultsOnTheMainModel(t *testing.T) {
	faults := map[string]openaitest.Answer{
		"timeout":      {Fault: openaitest.FaultHang},
		"429":          {Fault: openaitest.Fault429, RetryAfter: 0},
		"500":          {Fault: openaitest.Fault500},
		"cut stream":   {Text: strings.Repeat("half a reply ", 20), Fault: openaitest.FaultCut},
		"garbage json": {Fault: openaitest.FaultMalformed},
		"empty answer": {Fault: openaitest.FaultEmpty},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
			r.fake.Script(fault)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s := &discardSink{}
			in := inbound("faults", 1)
			start := time.Now()
			if err := handle(ctx, r.p, in, s); err != nil {
				t.Fatal(err)
			}
			if len(s.notices) != 1 || !strings.Contains(s.notices[0], "/regen") {
				t.Errorf("notice = %v, want one short message saying how to retry", s.notices)
			}
			var users, replies int64
			r.st.DB().Model(&models.Message{}).Where("role = ? AND content = ?", "user", in.Text).Count(&users)
			r.st.DB().Model(&models.Message{}).Where("role = ? AND chat_id IN (SELECT id FROM chats WHERE channel_id = ?)", "assistant", "console:faults").Count(&replies)
			if users != 1 || replies != 1 { // the greeting is the one reply
				t.Errorf("stored %d user messages and %d assistant messages; want the message kept and no reply", users, replies)
			}
			t.Logf("%s: answered the user in %s", name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestScribeFaultsWriteNothing: a failing scribe never yields a memory
// write reported as done without its row.
func TestScribeFaultsWriteNothing(t *testing.T) {
	faults := []openaitest.Answer{
		{Fault: openaitest.Fault500}, {Fault: openaitest.Fault429}, {Fault: openaitest.FaultMalformed},
		{Fault: openaitest.FaultEmpty}, {Text: "## Story so far\nonly this"},
	}
	for i, fault := range faults {
		t.Run(fmt.Sprint(fault.Fault, i), func(t *testing.T) {
			t.Parallel()
			r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
			ctx := context.Background()
			for beat := 1; beat <= 12; beat++ {
				must(t, handle(ctx, r.p, inbound("scribe", beat), &discardSink{}))
			}
			ch, _ := r.st.Channel(ctx, "console:scribe")
			r.fake.Script(fault, fault, fault)
			res, err := r.mem.Compact(ctx, ch.CurrentChatID, true)
			sums, _ := r.st.ChatSummaries(ctx, ch.CurrentChatID)
			if err == nil || res.Outcome == memory.Written || len(sums) != 0 {
				t.Errorf("compact with a failing scribe: %+v, %v, %d summaries", res, err, len(sums))
			}
			for _, kind := range []func() (memory.Result, error){
				func() (memory.Result, error) { return r.mem.Recap(ctx, ch.CurrentChatID) },
			} {
				r.fake.Script(fault, fault, fault)
				res, err := kind()
				if _, rerr := r.st.Recap(ctx, ch.CurrentChatID); (err == nil && res.Outcome == memory.Written) || rerr == nil {
					t.Errorf("recap with a failing scribe: %+v, %v; a recap row exists: %v", res, err, rerr == nil)
				}
			}
		})
	}
}
