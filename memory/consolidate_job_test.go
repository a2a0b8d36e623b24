package memory_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

const space = "discord:guild:1"

// badFirst answers the first n consolidation requests with bad(the good
// answer) and everything else as the worked example's scribe does.
func badFirst(s *memorytest.Scribe, n int, bad func(good string) string) func(openaitest.Request) openaitest.Answer {
	var mu sync.Mutex
	seen := 0
	return func(req openaitest.Request) openaitest.Answer {
		a := s.Respond(req)
		if memorytest.Kind(req) != "consolidate" {
			return a
		}
		mu.Lock()
		defer mu.Unlock()
		if seen++; seen <= n {
			a.Text = bad(a.Text)
		}
		return a
	}
}

// addLine puts line into an answer's handbook (handbook) or resident.
func addLine(answer, line string, handbook bool) string {
	if handbook {
		mk := memory.Markers["en"][1]
		return strings.Replace(answer, "\n"+mk, "\n"+line+"\n"+mk, 1)
	}
	return answer + "\n" + line
}

// changeRecap gives jA a new recap with one more line, which owes a
// consolidation.
func (w *worked) changeRecap(t *testing.T, line string) {
	t.Helper()
	recap := readFixture(t, "recap_jA.md") + "\n" + line
	must(t, w.st.InstallRecap(context.Background(), models.Recap{ChatID: "jA", CardID: "qingwu", SpaceID: space, ChatName: "Rainy night at the inn", Content: recap, Hash: memory.Hash(recap), Fingerprint: memory.Hash(line)}))
}

func (w *worked) memory(t *testing.T) models.MemoryState {
	t.Helper()
	mem, err := w.st.LoadMemory(context.Background(), "qingwu", space)
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// Issue 11, defect 2: a fact only chat jA supported, which the scribe adds
// without a tag, is refused, so it cannot outlive /forget of jA as a
// "hand edit": nothing of it is left in the handbook, the resident or their
// history.
func TestScribeUntaggedFactDoesNotSurviveForget(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, b)
			w.consolidateFixture(t)
			fact := "- The inn's lantern is painted with red cranes."
			w.changeRecap(t, fact)
			untagged := func(good string) string { return addLine(addLine(good, fact, true), fact, false) }

			// Twice untagged: rejected, nothing installed.
			before := w.memory(t)
			w.fake.SetResponder(badFirst(w.scribe, 2, untagged))
			_, err := w.mem.Consolidate(ctx, "qingwu", space)
			var rej *memory.RejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("untagged line from the scribe: err = %v, want it rejected", err)
			}
			if after := w.memory(t); after.Version() != before.Version() {
				t.Errorf("a rejected answer changed the memory")
			}

			// Untagged once, then repaired: written without the line.
			w.fake.SetResponder(badFirst(w.scribe, 1, untagged))
			if res, err := w.mem.Consolidate(ctx, "qingwu", space); err != nil || res.Outcome != memory.Written {
				t.Fatalf("consolidate with a repair: %+v, %v", res, err)
			}
			mem := w.memory(t)
			if strings.Contains(handbook.CrossSections(mem.Handbook), "red cranes") || strings.Contains(mem.Resident, "red cranes") {
				t.Errorf("the scribe's untagged line was installed:\n%s\n---\n%s", mem.Handbook, mem.Resident)
			}
			if !strings.Contains(blockOf(mem.Handbook, "jA"), fact) {
				t.Errorf("jA's block lacks its recap's fact:\n%s", mem.Handbook)
			}

			w.fake.SetResponder(w.scribe.Respond)
			if _, err := w.mem.ForgetChat(ctx, "jA"); err != nil {
				t.Fatal(err)
			}
			if res, err := w.mem.Consolidate(ctx, "qingwu", space); err != nil || res.Outcome != memory.Written {
				t.Fatalf("consolidate after forget: %+v, %v", res, err)
			}
			checkNoTrace(t, w.st, "jA", []string{"red cranes", "umbrella", "scorch mark"})
			mem = w.memory(t)
			for _, hand := range []string{"- Qingwu's sister comes to the inn on market days."} {
				if !strings.Contains(mem.Handbook, hand) {
					t.Errorf("the hand edit %q was lost", hand)
				}
			}
		})
	}
}

// Issue 11, defect 2: what a forgotten chat leaves in other forms — its
// block or heading, a foreign tag — is refused in the handbook and the
// resident alike, and its fact stays gone.
func TestForgottenChatLeftoversRefused(t *testing.T) {
	const fact = "The old pear tree did not blossom."
	cases := []struct {
		name     string
		line     string
		handbook bool
	}{
		{"block in the handbook", "# Chat: A letter from the tea fields (jB)\n- " + fact, true},
		{"level-two heading in the handbook", "## Chat: A letter from the tea fields (jB)\n- " + fact + " [chat:jA]", true},
		{"heading in the resident", "## Chat: A letter from the tea fields (jB)", false},
		{"capitalised tag", "- " + fact + " [Chat:jB]", true},
		{"capitalised tag in the resident", "- " + fact + " [Chat:jB]", false},
		{"parenthesised tag", "- " + fact + " (chat jB)", true},
		{"parenthesised tag beside a live one", "- " + fact + " [chat:jA] (chat jB)", false},
		{"tag with a space", "- " + fact + " [chat: jB]", true},
		{"bare id", "- A letter from the tea fields (jB): " + fact + " [chat:jA]", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, testenv.Backends(t)[0])
			w.consolidateFixture(t)
			if _, err := w.mem.ForgetChat(ctx, "jB"); err != nil {
				t.Fatal(err)
			}
			w.fake.SetResponder(badFirst(w.scribe, 2, func(good string) string { return addLine(good, tc.line, tc.handbook) }))
			_, err := w.mem.Consolidate(ctx, "qingwu", space)
			var rej *memory.RejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("err = %v, want the answer rejected", err)
			}
			mem := w.memory(t)
			if strings.Contains(mem.Handbook+mem.Resident, "pear tree") || strings.Contains(mem.Handbook+mem.Resident, "jB") {
				t.Errorf("the forgotten chat is back:\n%s\n---\n%s", mem.Handbook, mem.Resident)
			}
			rec, _ := w.st.Job(ctx, memory.KindConsolidate, "qingwu|"+space)
			if rec.Outcome != "failed" || strings.Contains(strings.ToLower(rec.Reason), "pear") || strings.Contains(rec.Reason, "tea fields") {
				t.Errorf("job record = %+v: want a failure whose reason quotes no story text", rec)
			}
			// A scribe that answers well is accepted after all.
			w.fake.SetResponder(w.scribe.Respond)
			if res, err := w.mem.Consolidate(ctx, "qingwu", space); err != nil || res.Outcome != memory.Written {
				t.Fatalf("good answer: %+v, %v", res, err)
			}
			checkNoTrace(t, w.st, "jB", jBPhrases)
		})
	}
}

// Issue 11, defect 3: an answer that keeps a live chat's heading but none
// of its facts is not installed as written: the engine builds each chat's
// block from its recap. Since issue 30 (item 10) the blocks a scribe writes
// are dropped rather than refused, so the answer is installed at once, with
// the engine's blocks.
func TestLiveChatBlockKeepsItsFacts(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, b)
			w.consolidateFixture(t)
			fact := "- The traveler left a silver coin on the counter."
			w.changeRecap(t, fact)
			before := w.memory(t)
			// The whole handbook as a scribe used to write it, with jA's
			// block reduced to its heading and source line.
			mk := memory.Markers["en"]
			hollow := mk[0] + "\n# Chat: Rainy night at the inn (jA)\nSource: chat jA\n\n" +
				"# Chat: A letter from the tea fields (jB)\n- The old pear tree behind the inn did not blossom this year.\nSource: chat jB\n\n" +
				readFixture(t, "handbook.md") + "\n" + mk[1] + "\n" + readFixture(t, "resident.md")
			calls := w.fake.Count()
			w.fake.Script(openaitest.Answer{Text: hollow})
			if res, err := w.mem.Consolidate(ctx, "qingwu", space); err != nil || res.Outcome != memory.Written {
				t.Fatalf("an answer with jA's heading and none of its facts: %+v, %v", res, err)
			}
			if n := w.fake.Count() - calls; n != 1 {
				t.Errorf("made %d calls, want the answer installed at once", n)
			}
			if after := w.memory(t); after.Version() == before.Version() {
				t.Errorf("nothing was installed")
			}
			// Every chat's block carries its recap, not the answer's.
			mem := w.memory(t)
			recaps := map[string]string{"jA": readFixture(t, "recap_jA.md") + "\n" + fact, "jB": readFixture(t, "recap_jB.md")}
			for id, recap := range recaps {
				block := blockOf(mem.Handbook, id)
				_, body, _ := strings.Cut(recap, "\n")
				for _, l := range strings.Split(body, "\n") {
					if l = strings.TrimSpace(l); l != "" && !strings.Contains(block, l) {
						t.Errorf("%s's block lacks %q:\n%s", id, l, block)
					}
				}
			}
			if strings.Count(mem.Handbook, "(jA)\n") != 1 {
				t.Errorf("jA has more than one block:\n%s", mem.Handbook)
			}
		})
	}
}

// The lines a person wrote through the hard path survive consolidations
// and the forgetting of every chat, and only they may go untagged.
func TestHandWrittenLineSurvivesConsolidationAndForget(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, b)
			w.consolidateFixture(t)
			note := "- Ask before mentioning her brother."
			mem := w.memory(t)
			hb, rs := mem.Handbook+"\n"+note, mem.Resident+"\n"+note
			must(t, w.st.EditMemory(ctx, "qingwu", space, &hb, &rs, "edited by hand"))
			check := func(when string) {
				t.Helper()
				mem := w.memory(t)
				for _, want := range []string{note, "- Qingwu's sister comes to the inn on market days."} {
					if !strings.Contains(mem.Handbook, want) {
						t.Errorf("%s: the handbook lost the hand-written %q:\n%s", when, want, mem.Handbook)
					}
				}
				for _, want := range []string{note, "- Keep Qingwu's replies short."} {
					if !strings.Contains(mem.Resident, want) {
						t.Errorf("%s: the resident lost the hand-written %q:\n%s", when, want, mem.Resident)
					}
				}
			}
			consolidate := func(when string) {
				t.Helper()
				if res, err := w.mem.Consolidate(ctx, "qingwu", space); err != nil || res.Outcome != memory.Written {
					t.Fatalf("%s: consolidate: %+v, %v", when, res, err)
				}
				check(when)
			}
			// Right after the edit the scribe still may not add an
			// untagged line of its own.
			w.fake.SetResponder(badFirst(w.scribe, 2, func(good string) string {
				return addLine(good, "- Qingwu hums while she sweeps.", false)
			}))
			var rej *memory.RejectedError
			if _, err := w.mem.Consolidate(ctx, "qingwu", space); !errors.As(err, &rej) {
				t.Fatalf("an untagged line of the scribe's after a hand edit: err = %v, want it rejected", err)
			}
			w.fake.SetResponder(w.scribe.Respond)
			consolidate("after the edit")
			for _, id := range []string{"jA", "jB"} {
				if _, err := w.mem.ForgetChat(ctx, id); err != nil {
					t.Fatal(err)
				}
				check("right after forgetting " + id)
				consolidate("after forgetting " + id)
			}
			if mem := w.memory(t); len(handbook.Blocks(mem.Handbook)) != 0 || strings.Contains(mem.Handbook+mem.Resident, "[chat:") {
				t.Errorf("chats remain after forgetting all:\n%s\n---\n%s", mem.Handbook, mem.Resident)
			}
		})
	}
}

// Issue 11, defect 5 (first half): the reason of a rejected answer —
// returned, stored in the job record and logged — names the rule and the
// line number, never the line's words; only the repair request to the
// scribe quotes the line.
func TestRejectionReasonQuotesNoStoryText(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, b)
			w.consolidateFixture(t)
			w.changeRecap(t, "- The lantern is painted with red cranes.")
			line := "- The lantern is painted with red cranes. [chat: jA]"
			w.fake.SetResponder(badFirst(w.scribe, 2, func(good string) string { return addLine(good, line, true) }))
			_, err := w.mem.Consolidate(ctx, "qingwu", space)
			var rej *memory.RejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("err = %v, want a rejection", err)
			}
			if !strings.Contains(rej.Reason, "malformed tag") || !strings.Contains(rej.Reason, "line ") {
				t.Errorf("reason %q does not name the rule and the line", rej.Reason)
			}
			rec, _ := w.st.Job(ctx, memory.KindConsolidate, "qingwu|"+space)
			for where, text := range map[string]string{"error": err.Error(), "job record": rec.Reason, "log": w.log.String()} {
				for _, word := range []string{"lantern", "painted", "cranes"} {
					if strings.Contains(text, word) {
						t.Errorf("the %s quotes %q: %s", where, word, text)
					}
				}
			}
			if rec.Reason == "" {
				t.Errorf("no reason recorded")
			}
			reqs := w.fake.Requests()
			if len(reqs) < 2 || !strings.Contains(memorytest.LastUser(reqs[len(reqs)-1]), line) {
				t.Errorf("the repair request does not show the scribe its line")
			}
		})
	}
}
