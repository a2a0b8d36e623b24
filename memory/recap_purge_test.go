package memory_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

var (
	stickyHandbookRe = regexp.MustCompile(`(?s)<handbook>\n(.*?)\n</handbook>`)
	stickyResidentRe = regexp.MustCompile(`(?s)<resident>\n(.*?)\n</resident>`)
	stickyDeletedRe  = regexp.MustCompile(`(?s)<deleted-chats>\n(.*?)</deleted-chats>`)
	stickyRecapRe    = regexp.MustCompile(`(?s)<recap chat-id="([^"]+)" chat-name="[^"]*">\n(.*?)\n</recap>`)
	codeRe           = regexp.MustCompile(`\b[A-Z]+-[0-9]+\b`)
)

// stickyConsolidation answers a consolidation as a scribe told to keep the
// entries of unchanged chats as they are may: every tagged line of the
// handbook's cross-chat sections and of the resident it was shown stays
// word for word (but a deleted chat's), and each file gains one line that
// mixes the recaps it was given: the codes (words like SAPPHIRE-77) they
// name, tagged by all of their chats.
func stickyConsolidation(req openaitest.Request) openaitest.Answer {
	user := req.Messages[1].Content
	deleted := map[string]bool{}
	if m := stickyDeletedRe.FindStringSubmatch(user); m != nil {
		for _, l := range strings.Split(m[1], "\n") {
			if id := strings.TrimSpace(strings.TrimPrefix(l, "- ")); id != "" {
				deleted[id] = true
			}
		}
	}
	var codes []string
	tags := ""
	for _, m := range stickyRecapRe.FindAllStringSubmatch(user, -1) {
		codes = append(codes, codeRe.FindAllString(m[2], -1)...)
		tags += "[chat:" + m[1] + "]"
	}
	codes = uniqueSorted(codes)
	mixed := ""
	if tags != "" {
		mixed = fmt.Sprintf("- Maren keeps in mind: %s %s", strings.Join(codes, ", "), tags)
	}
	file := func(re *regexp.Regexp, heading string) string {
		lines := []string{heading}
		if m := re.FindStringSubmatch(user); m != nil {
		kept:
			for _, l := range strings.Split(m[1], "\n") {
				t := strings.TrimSpace(l)
				ids := handbook.Tags(t)
				if len(ids) == 0 {
					continue
				}
				for _, id := range ids {
					if deleted[id] {
						continue kept
					}
				}
				lines = append(lines, t)
			}
		}
		if mixed != "" {
			lines = append(lines, mixed)
		}
		return strings.Join(uniqueKeepOrder(lines), "\n")
	}
	mk := memory.Markers["en"]
	return openaitest.Answer{Text: mk[0] + "\n" + file(stickyHandbookRe, handbook.CrossHeadings["en"][0]) + "\n" + mk[1] + "\n" +
		file(stickyResidentRe, handbook.ResidentHeadings["en"][0])}
}

func uniqueSorted(words []string) []string {
	out := uniqueKeepOrder(words)
	sort.Strings(out)
	return out
}

func uniqueKeepOrder(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// Words of the card's other chats, which a mixed line holds beside the
// discarded reply's.
const (
	otherWord = "COBALT-9"
	thirdWord = "AMBER-5"
)

// otherChat starts another chat of the rig's card in its space, whose
// reply names word, and writes its recap.
func (r *branchRig) otherChat(t *testing.T, name, word string) models.Chat {
	t.Helper()
	ctx := context.Background()
	_, err := r.st.EnsureChannel(ctx, models.Channel{ID: "console:" + name, Platform: "console", ExternalID: name, SpaceID: r.chat.SpaceID})
	must(t, err)
	chat, err := r.st.StartChat(ctx, "console:"+name, "maren", r.chat.SpaceID, name, &models.Message{Role: "assistant", Content: "The tide is out."})
	must(t, err)
	msgs := []*models.Message{{Role: "user", AuthorName: "Ada", Content: "What is in the chest?"}, {Role: "assistant", AuthorName: "Maren", Content: "Maren lifts out the " + word + " coin."}}
	must(t, r.st.Append(ctx, chat.ID, chat.HeadID, chat.HeadID, msgs))
	res, err := r.mem.Recap(ctx, chat.ID)
	if err != nil || res.Outcome != memory.Written {
		t.Fatalf("recap of %s: %+v, %v", name, res, err)
	}
	return chat
}

// history lists every stored old version of the rig's cards' handbooks
// and residents in the space.
func (r *branchRig) history(t *testing.T) []string {
	t.Helper()
	var hs []models.MemoryHistory
	must(t, r.st.DB().Where("space_id = ? AND card_id IN ?", r.chat.SpaceID, r.cards).Find(&hs).Error)
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.CardID + " " + h.Kind + ": " + h.Content
	}
	return out
}

// TestRegenPurgesMergedRecap: the recap that covers the reply a /regen
// discarded had already been merged, and the scribe mixed the reply's
// words into a line another chat supports too. A scribe that keeps the
// lines it is shown (the sticky one) keeps those words for ever unless the
// engine takes them out: after the recap and consolidation jobs the
// discarded reply is in no recap, handbook, resident or history row of any
// card, and the other chats' facts, which shared the line, are written
// again from their live recaps. The faithful scribe is the control. One
// card and scenes, on both databases.
func TestRegenPurgesMergedRecap(t *testing.T) {
	t.Parallel()
	for _, sticky := range []bool{true, false} {
		for _, scene := range []bool{false, true} {
			name := "faithful"
			if sticky {
				name = "sticky"
			}
			if scene {
				name += "/scene"
			} else {
				name += "/one card"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				for _, b := range testenv.Backends(t) {
					t.Run(b.Name, func(t *testing.T) { regenAfterMerge(t, b, scene, sticky) })
				}
			})
		}
	}
}

func regenAfterMerge(t *testing.T, b testenv.Backend, scene, sticky bool) {
	ctx := context.Background()
	r := newBranchRig(t, b, scene)
	faithful := &memorytest.Faithful{}
	r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		if sticky && memorytest.Kind(req) == "consolidate" {
			return stickyConsolidation(req)
		}
		return faithful.Respond(req)
	})
	r.recap(t)
	r.otherChat(t, "cove", otherWord)
	r.consolidate(t)
	// A third chat's merge puts the first files, which name the reply,
	// into history.
	r.otherChat(t, "dunes", thirdWord)
	r.consolidate(t)
	maren, err := r.st.LoadMemory(ctx, "maren", r.chat.SpaceID)
	must(t, err)
	if !strings.Contains(maren.Resident, discardedWord) || !strings.Contains(strings.Join(r.history(t), "\n"), discardedWord) {
		t.Fatalf("before the regen the reply should be in maren's resident and history:\n%s\n%q", maren.Resident, r.history(t))
	}
	if sticky && !strings.Contains(maren.Resident, otherWord+", "+discardedWord) {
		t.Fatalf("the sticky scribe should have mixed the two chats' words on one line:\n%s", maren.Resident)
	}

	// A consolidation refused before the regen may have quoted the line in
	// its recorded reason.
	refused := models.JobRecord{Kind: "consolidate", Key: models.MemoryJobKey("maren", r.chat.SpaceID), Outcome: "failed",
		Reason: "the answer's line 3 repeats " + discardedWord, UpdatedAt: time.Now()}
	must(t, r.st.DB().Save(&refused).Error)

	r.regen(t, "Maren hides the "+keptWord+" key in the lamp.")
	r.recap(t)
	var reasons []string
	must(t, r.st.DB().Model(&models.JobRecord{}).Pluck("reason", &reasons).Error)
	for _, reason := range reasons {
		if strings.Contains(reason, discardedWord) {
			t.Errorf("a memory job's recorded reason still quotes the discarded reply: %q", reason)
		}
	}
	r.consolidate(t)

	if where := r.holds(t, discardedWord); len(where) > 0 {
		for _, w := range where {
			t.Errorf("the discarded reply %s is still in %s:\n%s", discardedWord, w, r.memoryText(t)[w])
		}
	}
	for _, h := range r.history(t) {
		if strings.Contains(h, discardedWord) {
			t.Errorf("the discarded reply %s is still in history: %s", discardedWord, h)
		}
	}
	for _, card := range r.cards {
		st, err := r.st.LoadMemory(ctx, card, r.chat.SpaceID)
		must(t, err)
		words := []string{keptWord}
		if card == "maren" {
			words = append(words, otherWord, thirdWord)
		}
		for _, w := range words {
			// The faithful scribe's cross-chat entries are the recaps'
			// titles; the sticky one writes its mixed line in both files.
			if !strings.Contains(st.Resident, w) || sticky && !strings.Contains(handbook.CrossSections(st.Handbook), w) {
				t.Errorf("%s's resident (and the sticky scribe's cross-chat sections) should name %s again:\n%s\n\n%s", card, w, st.Handbook, st.Resident)
			}
		}
		if !strings.Contains(st.Handbook, keptWord) || !handbook.Blocks(st.Handbook)[r.chat.ID] {
			t.Errorf("%s's handbook should have the chat's block written again from its new recap:\n%s", card, st.Handbook)
		}
	}
	if owed, err := r.st.OwedConsolidations(ctx); err != nil || len(owed) > 0 {
		t.Errorf("consolidations owed after the jobs ran: %v, %v", owed, err)
	}
}
