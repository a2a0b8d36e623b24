package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

// Issue 30, item 10: a consolidation answer that also writes the chats'
// blocks, in the seed's format, English and Chinese, is installed as the
// faithful one is: the blocks are dropped (the engine builds them from the
// recaps), so nothing of them reaches the handbook or the resident. An
// answer with a section the format does not have, or a block of a chat that
// is not live, is still refused.
func TestConsolidationDropsEchoedChatBlocks(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		for _, lang := range []string{"en", "zh"} {
			t.Run(b.Name+"/"+lang, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				// Each setup gets a database of its own, on b's kind.
				setup := func() *worked {
					w := newWorked(t, backendLike(t, b))
					must(t, w.st.UpsertCard(ctx, models.Card{ID: "qingwu", Name: "Qingwu", Language: lang, Data: "{}"}))
					return w
				}
				// The control: the faithful scribe.
				control := setup()
				if res, err := control.mem.Consolidate(ctx, "qingwu", space); err != nil || res.Outcome != memory.Written {
					t.Fatalf("faithful consolidation: %+v, %v", res, err)
				}
				want := control.memory(t)

				w := setup()
				w.fake.SetResponder(memorytest.EchoBlocks(w.scribe.Respond))
				res, err := w.mem.Consolidate(ctx, "qingwu", space)
				if err != nil || res.Outcome != memory.Written {
					t.Fatalf("consolidation that echoes the chat blocks: %+v, %v", res, err)
				}
				if n := w.scribe.Count("consolidate"); n != 1 {
					t.Errorf("the scribe was asked %d times, want its first answer installed", n)
				}
				got := w.memory(t)
				if strings.Contains(got.Handbook, memorytest.EchoMark) || strings.Contains(got.Resident, memorytest.EchoMark) {
					t.Errorf("the echoed blocks reached the memory:\n%s\n---\n%s", got.Handbook, got.Resident)
				}
				if got.Handbook != want.Handbook || got.Resident != want.Resident {
					t.Errorf("installed other files than the faithful answer's:\n%s\n---\n%s\nwant\n%s\n---\n%s", got.Handbook, got.Resident, want.Handbook, want.Resident)
				}
				for _, id := range []string{"jA", "jB"} {
					if n := strings.Count(got.Handbook, "("+id+")") + strings.Count(got.Handbook, "（"+id+"）"); n != 1 {
						t.Errorf("the handbook has %d block headings of %s, want the engine's one:\n%s", n, id, got.Handbook)
					}
				}

				// Still refused: a section the format does not have, or a
				// block of a chat that is not live, beside the echoed blocks.
				mk := memory.Markers[lang][0] + "\n"
				for name, extra := range map[string]string{
					"a heading outside the format": "# Notes of the scribe\n- Qingwu hums. [chat:jA]\n\n",
					"a block of an unknown chat":   handbook.ChatBlockHeading(lang, "Ghost", "jZ") + "\n- boo\n\n",
				} {
					w.recapChanged(t, lang)
					before := w.memory(t)
					calls := w.scribe.Count("consolidate")
					w.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
						a := memorytest.EchoBlocks(w.scribe.Respond)(req)
						if memorytest.Kind(req) == "consolidate" {
							a.Text = strings.Replace(a.Text, mk, mk+extra, 1)
						}
						return a
					})
					_, err := w.mem.Consolidate(ctx, "qingwu", space)
					var rej *memory.RejectedError
					if !errors.As(err, &rej) {
						t.Errorf("%s: err = %v, want the answer refused", name, err)
					}
					if n := w.scribe.Count("consolidate") - calls; n != 2 {
						t.Errorf("%s: asked %d times, want the answer and one repair", name, n)
					}
					if after := w.memory(t); after.Version() != before.Version() {
						t.Errorf("%s: a refused answer changed the memory", name)
					}
				}
			})
		}
	}
}

// recapChanged gives jA a new recap, which owes a consolidation.
func (w *worked) recapChanged(t *testing.T, line string) {
	t.Helper()
	mem := w.memory(t)
	for _, r := range mem.Recaps {
		if r.ChatID == "jA" {
			r.Content += "\n- " + line + " " + memory.Hash(r.Content)[:6]
			r.Hash = memory.Hash(r.Content)
			must(t, w.st.InstallRecap(context.Background(), r))
		}
	}
}

// backendLike is a fresh database of b's kind.
func backendLike(t *testing.T, b testenv.Backend) testenv.Backend {
	t.Helper()
	for _, fresh := range testenv.Backends(t) {
		if fresh.Name == b.Name {
			return fresh
		}
	}
	t.Fatalf("no %s backend", b.Name)
	return b
}
