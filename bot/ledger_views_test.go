package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
)

// Words only the recorder's answers hold, never said in the chat: a
// prompt, summary, recap or memory holding one got it from the record.
const (
	flagSecret = "OBSIDIAN-FLAG-3307"
	relSecret  = "OBSIDIAN-REL-3307"
	// telling is what Ada tells Maren while 苏砚 may be away.
	telling = "Maren, the vault code is written in the blue book."
)

// TestLedgerSecretStaysWithThoseWhoWereThere (issue 29, part 4): Maren and
// 苏砚 in the cast; 苏砚 /cast away while Ada tells Maren something; a
// recorder keeps what it made of the telling in a ledger flag (from that
// batch on, as a recorder that carries its state forward does) and in
// relationship items — Maren's to 苏砚, 苏砚's to Maren citing the telling,
// and 苏砚's to Ada citing the batch's first event — and a scribe copies the
// ledger's flags into the summaries and recaps it writes. After 苏砚 is back:
// none of 苏砚's prompts, her view's summaries, her card's recap, handbook
// and resident, nor her prompt in a later chat holds either word, while
// Maren's do. The control story has 苏砚 never away: then hers hold them too.
func TestLedgerSecretStaysWithThoseWhoWereThere(t *testing.T) {
	for _, away := range []bool{true, false} {
		for _, b := range sharedBackends(t) {
			name := b.name + "/away"
			if !away {
				name = b.name + "/control"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				r := newViewRig(t, b, viewOpts{recorder: true, batch: 2, noRecall: true})
				r.scribe.LedgerFacts = true
				r.record = secretInLedgerAndRelationships()
				say := r.sayer(t)
				turn := func(text string) []scenePrompt {
					ps := say(text)
					r.drain(t)
					return ps
				}
				chat := sceneChat(t, r.sceneRig)
				turn("Good evening, both of you.")
				turn("@苏砚 how is the tea tonight?")
				if away {
					r.exec(t, "/cast away 苏砚")
				}
				turn(telling)
				turn("Maren, keep it to yourself.")
				if _, err := r.mem.Record(ctx, chat.ID); err != nil {
					t.Fatal(err)
				}
				if away {
					r.exec(t, "/cast back 苏砚")
				}
				// Turns with both until a compaction after the telling's
				// batch gives Maren's summary the flag (the control of the
				// scribe's ledger path).
				for i := 0; !r.memberSummaryHolds(t, chat.ID, "Maren", flagSecret); i++ {
					if i == 12 {
						t.Fatal("no summary of Maren's after 12 turns holds the ledger's flag")
					}
					turn(fmt.Sprintf("@苏砚 and Maren, the night goes on (%d).", i))
					if _, err := r.mem.Record(ctx, chat.ID); err != nil {
						t.Fatal(err)
					}
				}
				ps := turn("@苏砚 what have you heard tonight?")
				b1 := lastPrompt(t, ps, "苏砚")
				ps = turn("Maren, what do you remember?")
				a1 := lastPrompt(t, ps, "Maren")
				for _, w := range []string{flagSecret, relSecret} {
					if !strings.Contains(a1, w) {
						t.Errorf("Maren's prompt lacks %s:\n%s", w, a1)
					}
					if got := strings.Contains(b1, w); got == away {
						t.Errorf("苏砚 (away: %v) has %s in her prompt: %v, want %v:\n%s", away, w, got, !away, b1)
					}
				}
				if away {
					r.noneOfHers(t)
				}
				if got := r.memberSummaryHolds(t, chat.ID, "苏砚", flagSecret); got == away {
					t.Errorf("苏砚's (away: %v) summaries hold the flag: %v, want %v", away, got, !away)
				}

				// The chat ends: recaps, consolidations, a later chat.
				r.exec(t, "/new")
				r.drain(t)
				r.drain(t)
				recaps, err := r.st.ChatRecaps(ctx, chat.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(recaps) != 2 {
					t.Fatalf("%d recaps of the ended scene, want one per cast card", len(recaps))
				}
				for _, rc := range recaps {
					if want := rc.CardID == "lantern-keeper" || !away; strings.Contains(rc.Content, flagSecret) != want {
						t.Errorf("recap of %s holds the flag: %v, want %v:\n%s", rc.CardID, !want, want, rc.Content)
					}
				}
				for _, card := range []string{"lantern-keeper", "tea-house"} {
					mem, err := r.st.LoadMemory(ctx, card, chat.SpaceID)
					if err != nil {
						t.Fatal(err)
					}
					want := card == "lantern-keeper" || !away
					for what, text := range map[string]string{"handbook": mem.Handbook, "resident": mem.Resident} {
						if got := strings.Contains(text, flagSecret); got != want {
							t.Errorf("%s's %s holds the flag: %v, want %v:\n%s", card, what, got, want, text)
						}
						if strings.Contains(text, relSecret) {
							t.Errorf("%s's %s holds the relationship's word, which no scribe was shown:\n%s", card, what, text)
						}
					}
				}
				ps = turn("@苏砚 good morning.")
				b2 := lastPrompt(t, ps, "苏砚")
				ps = turn("Maren, good morning.")
				a2 := lastPrompt(t, ps, "Maren")
				for _, w := range []string{flagSecret, relSecret} {
					if !strings.Contains(a2, w) {
						t.Errorf("Maren's prompt in the next chat lacks %s:\n%s", w, a2)
					}
					if got := strings.Contains(b2, w); got == away {
						t.Errorf("苏砚 (away: %v) in the next chat has %s: %v, want %v:\n%s", away, w, got, !away, b2)
					}
				}
				if away {
					r.noneOfHers(t)
				}
			})
		}
	}
}

// secretInLedgerAndRelationships edits the recorder's contract answers:
// from the batch of the telling on, the ledger's flags hold flagSecret;
// in that batch, Maren's relationship to 苏砚 and 苏砚's to Maren cite the
// telling, and 苏砚's to Ada cites the batch's first event, each naming
// relSecret.
func secretInLedgerAndRelationships() func(req openaitest.Request, answer string) string {
	var mu sync.Mutex
	told := false
	return func(req openaitest.Request, answer string) string {
		mu.Lock()
		defer mu.Unlock()
		evs := memorytest.RecorderEvents(req)
		var at string
		for _, e := range evs {
			if strings.Contains(e.Text, telling) {
				at, told = e.ID, true
			}
		}
		var a map[string]any
		if !told || json.Unmarshal([]byte(answer), &a) != nil {
			return answer
		}
		ledger, _ := a["ledger"].(map[string]any)
		if ledger == nil {
			ledger = map[string]any{"place": "the lighthouse"}
		}
		ledger["flags"] = map[string]string{"vault": flagSecret}
		a["ledger"] = ledger
		if at != "" {
			a["relationships"] = []map[string]string{
				{"from": "Maren", "to": "苏砚", "description": "keeps the vault's " + relSecret + " from her", "event": at},
				{"from": "苏砚", "to": "Maren", "description": "knows the vault's " + relSecret, "event": at},
				{"from": "苏砚", "to": "Ada", "description": "heard Ada tell of " + relSecret, "event": evs[0].ID},
			}
		}
		out, _ := json.Marshal(a)
		return string(out)
	}
}

// memberSummaryHolds reports whether some summary of who's view of the
// chat holds word.
func (r *viewRig) memberSummaryHolds(t *testing.T, chatID, who, word string) bool {
	t.Helper()
	var n int64
	err := r.st.DB().Model(&models.Summary{}).Joins("JOIN summary_members sm ON sm.summary_id = summaries.id").
		Where("summaries.chat_id = ? AND sm.character_name = ? AND summaries.content LIKE ?", chatID, who, "%"+word+"%").Count(&n).Error
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// noneOfHers checks every prompt 苏砚 was given so far: none holds either
// word.
func (r *viewRig) noneOfHers(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, p := range r.prompts {
		if p.who != "苏砚" {
			continue
		}
		text := promptText(p)
		for _, w := range []string{flagSecret, relSecret} {
			if strings.Contains(text, w) {
				t.Errorf("苏砚's prompt %d holds %s:\n%s", i, w, text)
			}
		}
	}
}
