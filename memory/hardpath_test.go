package memory_test

import (
	"context"
	"regexp"
	"sort"
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

var factTokenRe = regexp.MustCompile(`\b[A-Z]+-[0-9]+\b`)

// factTokens lists the fact tokens (words like COBALT-9) of the handbook
// and resident.
func factTokens(m models.MemoryState) []string {
	return uniqueSorted(factTokenRe.FindAllString(m.Handbook+"\n"+m.Resident, -1))
}

// The hard path as seed 000 has it: after a hand edit and after a deleted
// recap, every merge mark is cleared and the handbook and resident are
// rebuilt from the remaining recaps on a base of the person's lines alone,
// so a line the scribe would keep because it was shown (a faithful scribe
// keeps what it is given) does not survive the rebuild.
func TestHardPathRebuildsFromTheRemainingRecaps(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			fake := openaitest.NewServer(t)
			fake.SetResponder((&memorytest.Faithful{}).Respond)
			client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: -1}, nil)
			mem := memory.NewService(st, llm.Scribe{C: client}, memory.ConfigFrom(config.Default().Memory, "en"), nil)
			first, err := st.Chat(ctx, storyChat(t, st).ID)
			must(t, err)
			must(t, st.Append(ctx, first.ID, first.HeadID, first.HeadID, []*models.Message{
				{Role: "user", AuthorName: "Ada", Content: "What is in the chest?"},
				{Role: "assistant", AuthorName: "Maren", Content: "Maren lifts out the JADE-4 coin."}}))
			if res, err := mem.Recap(ctx, first.ID); err != nil || res.Outcome != memory.Written {
				t.Fatalf("recap: %+v, %v", res, err)
			}
			r := &branchRig{st: st, fake: fake, mem: mem, chat: first, cards: []string{"maren"}}
			second := r.otherChat(t, "second", otherWord)
			third := r.otherChat(t, "third", thirdWord)
			space := first.SpaceID
			consolidate := func(what string) models.MemoryState {
				t.Helper()
				if res, err := mem.Consolidate(ctx, "maren", space); err != nil || res.Outcome != memory.Written {
					t.Fatalf("consolidation %s: %+v, %v", what, res, err)
				}
				m, err := st.LoadMemory(ctx, "maren", space)
				must(t, err)
				return m
			}
			m := consolidate("of three chats")
			if got, want := factTokens(m), []string{thirdWord, otherWord, "JADE-4"}; !sameSet(got, want) {
				t.Fatalf("before the hard path the memory holds %v, want %v", got, want)
			}

			// A person edits the resident: a line of their own, and a line
			// tagged as if chats supported it that no recap holds.
			const hand = "- The lamp was mended by hand."
			stray := "- Maren owes RUBY-3 to the ferryman [chat:" + first.ID + "][chat:" + second.ID + "]"
			edited := strings.TrimSpace(m.Resident) + "\n" + hand + "\n" + stray
			must(t, st.EditMemory(ctx, "maren", space, nil, &edited, "by hand"))
			m = consolidate("after the hand edit")
			if got, want := factTokens(m), []string{thirdWord, otherWord, "JADE-4"}; !sameSet(got, want) {
				t.Errorf("after the hand edit the rebuilt memory holds %v, want exactly the chats' %v:\n%s\n---\n%s", got, want, m.Handbook, m.Resident)
			}
			if !strings.Contains(m.Resident, hand) {
				t.Errorf("the rebuilt resident lost the hand line:\n%s", m.Resident)
			}
			for _, e := range m.Entries {
				if e.MergedHash == "" || e.MergedHash != e.RecapHash {
					t.Errorf("after the rebuild entry %+v is not merged", e)
				}
			}
			var histories int64
			must(t, st.DB().Model(&models.MemoryHistory{}).Where("card_id = ? AND space_id = ? AND kind = ? AND content = ?", "maren", space, "resident", edited).Count(&histories).Error)
			if histories != 1 {
				t.Errorf("the edited resident is in history %d times, want once", histories)
			}

			// The second chat's recap is deleted by hand.
			if _, err := mem.DeleteRecap(ctx, second.ID, ""); err != nil {
				t.Fatal(err)
			}
			m = consolidate("after the deleted recap")
			if got, want := factTokens(m), []string{thirdWord, "JADE-4"}; !sameSet(got, want) {
				t.Errorf("after the deleted recap the rebuilt memory holds %v, want exactly the remaining chats' %v:\n%s\n---\n%s", got, want, m.Handbook, m.Resident)
			}
			if !strings.Contains(m.Resident, hand) {
				t.Errorf("the rebuilt resident lost the hand line:\n%s", m.Resident)
			}
			if strings.Contains(m.Handbook+m.Resident, second.ID) {
				t.Errorf("the rebuilt memory still names the chat whose recap was deleted:\n%s\n---\n%s", m.Handbook, m.Resident)
			}
			_ = third
		})
	}
}

func sameSet(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, ",") == strings.Join(b, ",")
}
