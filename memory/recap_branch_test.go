package memory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// The reply a /regen discards, and the one it writes instead.
const (
	discardedWord = "SAPPHIRE-77"
	keptWord      = "EMERALD-42"
)

// branchRig is a chat whose last reply names discardedWord, with a
// faithful scribe: its recaps keep every line they are shown, and every
// fact of the previous recap they are given.
type branchRig struct {
	st    *models.Store
	fake  *openaitest.Server
	mem   *memory.Service
	chat  models.Chat
	cards []string
}

func newBranchRig(t *testing.T, b testenv.Backend, scene bool) *branchRig {
	t.Helper()
	ctx := context.Background()
	r := &branchRig{st: testenv.OpenStore(t, b), fake: openaitest.NewServer(t), cards: []string{"maren"}}
	r.fake.SetResponder((&memorytest.Faithful{}).Respond)
	client := llm.New(llm.Config{BaseURL: r.fake.URL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: -1}, nil)
	r.mem = memory.NewService(r.st, llm.Scribe{C: client}, memory.ConfigFrom(config.Default().Memory, "en"), nil)
	r.chat = storyChat(t, r.st)
	if scene {
		must(t, r.st.UpsertCard(ctx, models.Card{ID: "elias", Name: "Elias", Language: "en", Data: "{}"}))
		_, err := r.st.AddCast(ctx, r.chat.ID, "elias", "Elias", 8)
		must(t, err)
		r.cards = append(r.cards, "elias")
	}
	r.say(t, "Where is the key to the lamp room?", "Maren hides the "+discardedWord+" key under the stairs.")
	return r
}

func (r *branchRig) head(t *testing.T) models.Message {
	t.Helper()
	chat, err := r.st.Chat(context.Background(), r.chat.ID)
	must(t, err)
	m, err := r.st.Message(context.Background(), chat.HeadID)
	must(t, err)
	return m
}

// say stores a user line and its reply after the head.
func (r *branchRig) say(t *testing.T, line, reply string) {
	t.Helper()
	head := r.head(t)
	msgs := []*models.Message{{Role: "user", AuthorName: "Ada", Content: line}, {Role: "assistant", AuthorName: "Maren", Content: reply}}
	must(t, r.st.Append(context.Background(), r.chat.ID, head.ID, head.ID, msgs))
}

// regen replaces the last reply with a sibling, as /regen stores it.
func (r *branchRig) regen(t *testing.T, reply string) {
	t.Helper()
	head := r.head(t)
	must(t, r.st.Append(context.Background(), r.chat.ID, head.ID, head.ParentID, []*models.Message{{Role: "assistant", AuthorName: "Maren", Content: reply}}))
}

func (r *branchRig) recap(t *testing.T) {
	t.Helper()
	res, err := r.mem.Recap(context.Background(), r.chat.ID)
	if err != nil || res.Outcome != memory.Written {
		t.Fatalf("recap: %+v, %v", res, err)
	}
}

func (r *branchRig) consolidate(t *testing.T) []memory.Result {
	t.Helper()
	var out []memory.Result
	for _, card := range r.cards {
		res, err := r.mem.Consolidate(context.Background(), card, r.chat.SpaceID)
		if err != nil {
			t.Fatalf("consolidate %s: %+v, %v", card, res, err)
		}
		out = append(out, res)
	}
	return out
}

// memoryText is every recap of the chat and every card's handbook and
// resident, named.
func (r *branchRig) memoryText(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	recaps, err := r.st.ChatRecaps(ctx, r.chat.ID)
	must(t, err)
	for _, rc := range recaps {
		out["recap of "+rc.CardID] = rc.Content
	}
	for _, card := range r.cards {
		st, err := r.st.LoadMemory(ctx, card, r.chat.SpaceID)
		must(t, err)
		out["handbook of "+card], out["resident of "+card] = st.Handbook, st.Resident
	}
	return out
}

// holds reports where word is in the chat's memory.
func (r *branchRig) holds(t *testing.T, word string) []string {
	t.Helper()
	var where []string
	for name, text := range r.memoryText(t) {
		if strings.Contains(text, word) {
			where = append(where, name)
		}
	}
	return where
}

// TestRecapFollowsTheBranch: a recap written before a /regen covers the
// reply the /regen discarded. The next recap is written again from the
// branch, not merged with the old one, and consolidation never merges a
// recap that covers a discarded turn; so after the jobs run the discarded
// reply is in no recap, handbook or resident, and the reply that replaced
// it is. One-card chats and scenes (a recap per cast card), on both
// databases; the control: a chat that simply went on keeps building on its
// previous recap.
func TestRecapFollowsTheBranch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(t *testing.T, b testenv.Backend, scene bool)
	}{
		{"merged before the regen", mergedBeforeTheRegen},
		{"regen before the merge", regenBeforeTheMerge},
		{"control: the chat went on", chatWentOn},
	}
	for _, c := range cases {
		for _, scene := range []bool{false, true} {
			name := c.name + "/one card"
			if scene {
				name = c.name + "/scene"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				for _, b := range testenv.Backends(t) {
					t.Run(b.Name, func(t *testing.T) { c.run(t, b, scene) })
				}
			})
		}
	}
}

func mergedBeforeTheRegen(t *testing.T, b testenv.Backend, scene bool) {
	r := newBranchRig(t, b, scene)
	r.recap(t)
	r.consolidate(t)
	if where := r.holds(t, discardedWord); len(where) < 2*len(r.cards) {
		t.Fatalf("before the regen the reply should be in the recaps and residents, found in %v", where)
	}
	r.regen(t, "Maren hides the "+keptWord+" key in the lamp.")
	r.recap(t)
	if req, ok := r.fake.Last(); ok && strings.Contains(req.Messages[1].Content, "<previous-recap>") {
		t.Errorf("the recap after the regen was merged with the recap that covers the discarded reply:\n%s", req.Messages[1].Content)
	}
	r.consolidate(t)
	if where := r.holds(t, discardedWord); len(where) > 0 {
		t.Errorf("the discarded reply %s is still in %v", discardedWord, where)
	}
	if where := r.holds(t, keptWord); len(where) < 2*len(r.cards) {
		t.Errorf("the reply that replaced it should be in every recap and resident, found in %v", where)
	}
}

func regenBeforeTheMerge(t *testing.T, b testenv.Backend, scene bool) {
	ctx := context.Background()
	r := newBranchRig(t, b, scene)
	r.recap(t)
	r.regen(t, "Maren hides the "+keptWord+" key in the lamp.")
	for _, res := range r.consolidate(t) {
		if res.Outcome != memory.Skipped || !strings.Contains(res.Reason, memory.ReasonOffBranch) {
			t.Errorf("consolidation before the recap was written again = %+v, want skipped: %s", res, memory.ReasonOffBranch)
		}
	}
	for _, card := range r.cards {
		st, err := r.st.LoadMemory(ctx, card, r.chat.SpaceID)
		must(t, err)
		if strings.Contains(st.Handbook+st.Resident, discardedWord) {
			t.Errorf("%s's memory merged the recap that covers the discarded reply:\n%s\n%s", card, st.Handbook, st.Resident)
		}
	}
	chat, err := r.st.Chat(ctx, r.chat.ID)
	must(t, err)
	if owed, err := r.mem.RecapOwed(ctx, chat); err != nil || !owed {
		t.Errorf("RecapOwed after the regen = %v, %v; want owed", owed, err)
	}
	r.recap(t)
	r.consolidate(t)
	if where := r.holds(t, discardedWord); len(where) > 0 {
		t.Errorf("the discarded reply %s is still in %v", discardedWord, where)
	}
	if where := r.holds(t, keptWord); len(where) < 2*len(r.cards) {
		t.Errorf("the reply that replaced it should be in every recap and resident, found in %v", where)
	}
}

func chatWentOn(t *testing.T, b testenv.Backend, scene bool) {
	r := newBranchRig(t, b, scene)
	r.recap(t)
	r.say(t, "And the lamp?", "Maren lights the lamp with a steady hand.")
	r.recap(t)
	req, ok := r.fake.Last()
	if !ok || !strings.Contains(req.Messages[1].Content, "<previous-recap>") {
		t.Errorf("a recap on the same branch should build on the previous one; the request:\n%s", req.Messages[1].Content)
	}
	r.consolidate(t)
	if where := r.holds(t, discardedWord); len(where) < 3*len(r.cards) {
		t.Errorf("a reply still on the branch should be in every recap, handbook and resident, found in %v", where)
	}
}
