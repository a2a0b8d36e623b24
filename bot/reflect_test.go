package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/fakes/memorytest"
	"troupe/models/testenv"
)

// TestReflectCommandMemoryAndBeliefForget: /reflect forms a belief from the
// recorded perceptions, /memory lists it with its evidence, /belief forget
// deletes it and its perceptions are new again.
func TestReflectCommandMemoryAndBeliefForget(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newRecordRig(t, b, 100)
			r.fake.SetResponder(memorytest.Reflecting(r.scribe))
			for i := 1; i <= 4; i++ {
				r.say(t, "c1", i, "Ada", fmt.Sprintf("Beat %d: I climb the stair and ask about the old light.", i))
			}
			out := r.exec(t, "c1", "reflect")
			if !strings.Contains(out, "Reflected") {
				t.Fatalf("/reflect: %q", out)
			}
			st := r.st
			chats, err := st.SpaceChats(context.Background(), "lantern-keeper", "console:local:ada")
			if err != nil || len(chats) != 1 {
				t.Fatalf("chats: %v %v", chats, err)
			}
			bs, err := st.Beliefs(context.Background(), chats[0].SpaceID, "")
			if err != nil || len(bs) != 1 || len(bs[0].Evidence) < 2 {
				t.Fatalf("beliefs: %+v %v", bs, err)
			}
			mem := r.exec(t, "c1", "memory")
			if !strings.Contains(mem, "Beliefs (1):") || !strings.Contains(mem, bs[0].ID) || !strings.Contains(mem, "(likely, +") {
				t.Fatalf("/memory lacks the belief:\n%s", mem)
			}
			in := inbound("c1", 0)
			sink := &discardSink{}
			if err := r.p.Exec(context.Background(), in, bot.Command{Name: "belief", Args: "forget " + bs[0].ID}, sink); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sink.notices, "\n"); !strings.Contains(got, "Only members who can manage") {
				t.Fatalf("non-GM /belief forget: %q", got)
			}
			if left, _ := st.Beliefs(context.Background(), chats[0].SpaceID, ""); len(left) != 1 {
				t.Fatalf("a non-GM deleted a belief")
			}
			in.CanManage = true
			sink = &discardSink{}
			if err := r.p.Exec(context.Background(), in, bot.Command{Name: "belief", Args: "forget " + bs[0].ID}, sink); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(sink.notices, "\n"), "deleted") {
				t.Fatalf("/belief forget: %q", sink.notices)
			}
			if left, _ := st.Beliefs(context.Background(), chats[0].SpaceID, ""); len(left) != 0 {
				t.Fatalf("belief left: %+v", left)
			}
			cands, err := st.ReflectionCandidates(context.Background(), chats[0].SpaceID)
			if err != nil || len(cands) != 1 || cands[0].New != len(bs[0].Evidence) {
				t.Fatalf("perceptions not new again: %+v %v", cands, err)
			}
		})
	}
}
