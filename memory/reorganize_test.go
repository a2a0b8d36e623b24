package memory_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
)

const (
	reorgCard  = "mara"
	reorgSpace = "discord:guild:9"
	reorgChats = 20
	reorgBeats = 50 // per chat: 1,000 in all
)

var (
	reorgThings = []string{"lantern", "rope", "ledger", "compass", "kettle", "anchor", "flute", "saddle", "mirror", "sickle",
		"candle", "shovel", "banner", "locket", "barrel", "hammer", "ribbon", "quiver", "ladle", "bellows"}
	reorgPlaces = []string{"mill", "well", "chapel", "orchard", "harbor", "stable", "forge", "granary", "ferry", "tower",
		"market", "cellar", "bridge", "meadow", "quarry", "tannery", "garden", "smithy", "pier", "loft"}
)

// reorgFact is beat i of chat c: a fact of its own (its token is
// F<c>x<i>), and on every tenth beat a world fact every chat tells, in two
// wordings (even chats one, odd chats another) that only a reader can
// tell are the same.
func reorgFact(c, i int) string {
	if i%10 == 0 {
		if c%2 == 0 {
			return fmt.Sprintf("- The world: the northern bridge fell in winter W%d.", i/10)
		}
		return fmt.Sprintf("- The world: the north bridge collapsed in winter W%d.", i/10)
	}
	return fmt.Sprintf("- Traveler: mark F%02dx%02d, the %s lies by the %s.", c, i, reorgThings[(c*7+i*3)%20], reorgPlaces[(c*11+i*13)%20])
}

func reorgChatID(c int) string { return fmt.Sprintf("c%02d", c) }

func reorgRecap(c, beats int) string {
	h := memory.RecapHeadings["en"]
	var facts []string
	for i := range beats {
		facts = append(facts, reorgFact(c, i))
	}
	return fmt.Sprintf("# Chat %d\n\n%s\n- As told.\n\n%s\n- As in the chat.\n\n%s\n%s\n\n%s\n- none\n\n%s\n- none",
		c, h[0], h[1], h[2], strings.Join(facts, "\n"), h[3], h[4])
}

// reorgTraffic counts the characters of the scribe's reorganize requests
// and answers.
type reorgTraffic struct {
	mu    sync.Mutex
	chars int
	calls int
}

type reorgWorld struct {
	st      *models.Store
	mem     *memory.Service
	fake    *openaitest.Server
	traffic *reorgTraffic
	cfg     memory.Config
}

// newReorgWorld stores one card's 20 chats in a space (no turns: the
// recaps, record and beliefs are seeded directly) and a memory service
// whose scribe is the faithful fake.
func newReorgWorld(t *testing.T, b testenv.Backend, respond func(openaitest.Request) openaitest.Answer) *reorgWorld {
	t.Helper()
	ctx := context.Background()
	w := &reorgWorld{st: testenv.OpenStore(t, b), fake: openaitest.NewServer(t), traffic: &reorgTraffic{}}
	faithful := &memorytest.Faithful{CrossFacts: true}
	if respond == nil {
		respond = faithful.Respond
	}
	w.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		a := respond(req)
		if memorytest.IsReorganize(req) {
			w.traffic.mu.Lock()
			for _, m := range req.Messages {
				w.traffic.chars += utf8.RuneCountInString(m.Content)
			}
			w.traffic.chars += utf8.RuneCountInString(a.Text)
			w.traffic.calls++
			w.traffic.mu.Unlock()
		}
		return a
	})
	client := llm.New(llm.Config{BaseURL: w.fake.URL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: -1}, nil)
	mc := config.Default().Memory
	mc.BeliefsMax = 15
	w.cfg = memory.ConfigFrom(mc, "en")
	w.mem = memory.NewService(w.st, llm.Scribe{C: client}, w.cfg, slog.New(slog.DiscardHandler))
	db := w.st.DB()
	must(t, w.st.UpsertCard(ctx, models.Card{ID: reorgCard, Name: "Mara", Language: "en", Data: "{}"}))
	must(t, w.st.EnsureSpace(ctx, models.Space{ID: reorgSpace, Platform: "discord", Kind: "guild", ExternalID: "9"}))
	for c := range reorgChats {
		id := reorgChatID(c)
		must(t, db.Create(&models.Channel{ID: "discord:chan-" + id, Platform: "discord", ExternalID: "chan-" + id, SpaceID: reorgSpace, CardID: reorgCard, CurrentChatID: id}).Error)
		must(t, db.Create(&models.Chat{ID: id, ChannelID: "discord:chan-" + id, CardID: reorgCard, SpaceID: reorgSpace, Name: "Chat " + id, HeadID: id + "-m1", CreatedAt: time.Now(), ActiveAt: time.Now()}).Error)
		must(t, db.Create(&models.Message{ID: id + "-m1", ChatID: id, Role: "user", AuthorName: "Traveler", Content: "hello"}).Error)
	}
	return w
}

// seedRecord gives Mara a perception of each beat of each chat (story day
// i/5; every seventh unimportant, every tenth important) and four beliefs
// per chat: one every chat holds in the same words, one of its own, one
// whose evidence is gone and one whose evidence has faded past recall.
func (w *reorgWorld) seedRecord(t *testing.T) {
	t.Helper()
	db := w.st.DB()
	var evs []models.Event
	var ps []models.Perception
	var bs []models.Belief
	var ev []models.BeliefEvidence
	seq := int64(0)
	pid := func(c, i int) string { return fmt.Sprintf("p%02dx%02d", c, i) }
	for c := range reorgChats {
		id := reorgChatID(c)
		for i := range reorgBeats {
			seq++
			imp := 3
			switch {
			case i%10 == 0:
				imp = 8
			case i%7 == 0:
				imp = 1
			}
			eid := fmt.Sprintf("e%02dx%02d", c, i)
			fact := strings.TrimPrefix(reorgFact(c, i), "- ")
			evs = append(evs, models.Event{ID: eid, ChatID: id, SpaceID: reorgSpace, MessageID: id + "-m1", Seq: seq, Kind: "action", Actor: "Traveler",
				Text: fact, Day: i / 5, Minute: 600, Importance: imp, Sealed: true})
			ps = append(ps, models.Perception{ID: pid(c, i), ChatID: id, SpaceID: reorgSpace, Character: "Mara", EventID: eid, Mode: "saw",
				Text: "Mara saw: " + fact, Gist: "Mara saw something by the " + reorgPlaces[(c*11+i*13)%20], Importance: imp, Seq: seq, Day: i / 5, Minute: 600, Reflected: true})
		}
		beliefs := []struct {
			text     string
			evidence []string
		}{
			{"Mara trusts the innkeeper of the mill with her letters", []string{pid(c, 1), pid(c, 2)}},
			{fmt.Sprintf("Mara fears the storm she saw in chat %d", c), []string{pid(c, 48)}},
			{fmt.Sprintf("Mara doubts the ferryman number %d", c), []string{"gone" + id}},
			{fmt.Sprintf("Mara thinks the old road %d is closed", c), []string{pid(c, 0+7)}},
		}
		for k, b := range beliefs {
			bid := fmt.Sprintf("b%02dx%d", c, k)
			bs = append(bs, models.Belief{ID: bid, SpaceID: reorgSpace, Character: "Mara", Text: b.text, Confidence: 2, FormedSeq: seq, ChangedSeq: seq})
			for _, p := range b.evidence {
				ev = append(ev, models.BeliefEvidence{BeliefID: bid, PerceptionID: p, Stance: "supports", Seq: seq, ChatID: id})
			}
		}
	}
	must(t, db.CreateInBatches(evs, 200).Error)
	must(t, db.CreateInBatches(ps, 200).Error)
	must(t, db.CreateInBatches(bs, 200).Error)
	must(t, db.CreateInBatches(ev, 200).Error)
	// Index terms of perceptions that no longer exist: orphans.
	must(t, db.Create(&models.RecallTerm{ItemID: "gone-item", Term: "ferryman", SpaceID: reorgSpace, Character: "Mara", Seq: 1, Kind: "p"}).Error)
}

// handLine is the line a person wrote into the handbook.
const reorgHandLine = "- Mara never lies to the innkeeper (HAND1)."

// TestReorganizeThousandBeats plays 1,000 beats across 20 chats of one
// card: after each round of 20 beats each chat's recap is written again
// and the card's memory consolidated by the faithful scribe, which copies
// each chat's newest facts into the handbook (the world facts told in
// every chat come back once per chat, in two wordings); a reorganize runs
// whenever 5 writes or 40k tokens are owed, as the worker would, and once
// more at the end, as the nightly one. After every reorganize the
// handbook's cross-chat part and the beliefs are within their budgets, and
// at the end every fact of every chat (its token) is still in the
// handbook, the hand line is unchanged, every world fact is one entry, and
// reorganize's scribe traffic is at most 0.05× a lower bound of the
// roleplay traffic. It prints the figures the README quotes.
func TestReorganizeThousandBeats(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			w := newReorgWorld(t, b, nil)
			w.seedRecord(t)
			budget := w.cfg.Reorganize.HandbookMaxChars
			roleplay, runs := 0, 0
			var at100, at1000 [2]int
			for round := 1; round <= reorgBeats; round++ {
				st, err := w.st.LoadMemory(ctx, reorgCard, reorgSpace)
				must(t, err)
				resident := utf8.RuneCountInString(st.Resident)
				for c := range reorgChats {
					id := reorgChatID(c)
					recap := reorgRecap(c, round)
					must(t, w.st.InstallRecap(ctx, models.Recap{ChatID: id, CardID: reorgCard, SpaceID: reorgSpace, ChatName: "Chat " + id, Content: recap, Hash: memory.Hash(recap), Fingerprint: fmt.Sprint(round)}))
					// A lower bound of the beat's roleplay request: the
					// last keep (6) beats verbatim and the resident
					// summary (the card, the reply and the rest of the
					// prompt come on top).
					for i := max(0, round-6); i < round; i++ {
						roleplay += utf8.RuneCountInString(reorgFact(c, i)) + len("Mara: I see.")
					}
					roleplay += resident
				}
				if round == 1 {
					// A person's line, written through the hard path.
					st, err := w.st.LoadMemory(ctx, reorgCard, reorgSpace)
					must(t, err)
					hb := st.Handbook + "\n" + reorgHandLine
					must(t, w.st.EditMemory(ctx, reorgCard, reorgSpace, &hb, nil, "test"))
				}
				res, err := w.mem.Consolidate(ctx, reorgCard, reorgSpace)
				if err != nil || res.Outcome != memory.Written {
					t.Fatalf("round %d: consolidate = %+v, %v", round, res, err)
				}
				due, err := w.st.ReorganizeDue(ctx, w.cfg.Reorganize.Batches, w.cfg.Reorganize.Tokens, time.Time{})
				must(t, err)
				if round == reorgBeats {
					due = []models.MemoryKey{{CardID: reorgCard, SpaceID: reorgSpace}} // the nightly one
				}
				for range due {
					res, err := w.mem.Reorganize(ctx, reorgCard, reorgSpace)
					if err != nil {
						t.Fatalf("round %d: reorganize: %v", round, err)
					}
					runs++
					w.checkBudgets(t, round, budget, res)
				}
				if round == 5 || round == reorgBeats {
					st, err := w.st.LoadMemory(ctx, reorgCard, reorgSpace)
					must(t, err)
					sizes := [2]int{utf8.RuneCountInString(st.Handbook), utf8.RuneCountInString(handbook.CrossSections(st.Handbook))}
					if round == 5 {
						at100 = sizes
					} else {
						at1000 = sizes
					}
				}
			}
			st, err := w.st.LoadMemory(ctx, reorgCard, reorgSpace)
			must(t, err)
			for c := range reorgChats {
				for i := range reorgBeats {
					if i%10 == 0 {
						continue
					}
					if tok := fmt.Sprintf("F%02dx%02d", c, i); !strings.Contains(st.Handbook, tok) {
						t.Errorf("fact %s of live chat %s is gone from the handbook", tok, reorgChatID(c))
					}
				}
			}
			for k := range reorgBeats / 10 {
				tok := fmt.Sprintf("W%d", k)
				n := 0
				for _, l := range strings.Split(handbook.CrossSections(st.Handbook), "\n") {
					if strings.Contains(l, tok+".") {
						n++
					}
				}
				if n > 1 {
					t.Errorf("world fact %s is %d entries of the cross-chat part, want them merged into at most 1", tok, n)
				}
				if !strings.Contains(st.Handbook, tok+".") {
					t.Errorf("world fact %s is gone from the handbook", tok)
				}
			}
			if hand := handbook.HandEdits(st.Handbook, st.HandbookHand); len(hand) != 1 || hand[0] != reorgHandLine {
				t.Errorf("hand lines = %q, want exactly %q", hand, reorgHandLine)
			}
			var orphans int64
			must(t, w.st.DB().Model(&models.RecallTerm{}).Where("item_id = ?", "gone-item").Count(&orphans).Error)
			if orphans != 0 {
				t.Errorf("orphaned index term kept")
			}
			var folded int64
			must(t, w.st.DB().Model(&models.Perception{}).Where("text = gist").Count(&folded).Error)
			if folded == 0 {
				t.Errorf("no faded perception was folded to its gist")
			}
			share := float64(w.traffic.chars) / float64(roleplay)
			t.Logf("reorganize: %d runs, %d scribe calls, %d characters; roleplay lower bound %d characters; share %.4f", runs, w.traffic.calls, w.traffic.chars, roleplay, share)
			t.Logf("handbook at beat 100: %d characters (cross-chat part %d); at beat 1,000: %d (cross-chat part %d); budget of the cross-chat part %d",
				at100[0], at100[1], at1000[0], at1000[1], budget)
			if w.traffic.calls == 0 {
				t.Errorf("the scribe was never asked: the near-duplicate world facts need it")
			}
			if share > 0.05 {
				t.Errorf("reorganize traffic is %.3f× the roleplay traffic, want at most 0.05×", share)
			}
		})
	}
}

// checkBudgets asserts the handbook and Mara's beliefs are within their
// budgets after a reorganize, and no two beliefs say the same.
func (w *reorgWorld) checkBudgets(t *testing.T, round, budget int, res memory.Result) {
	t.Helper()
	ctx := context.Background()
	st, err := w.st.LoadMemory(ctx, reorgCard, reorgSpace)
	must(t, err)
	if n := utf8.RuneCountInString(handbook.CrossSections(st.Handbook)); n > budget {
		t.Errorf("round %d: handbook's cross-chat part is %d characters after a reorganize (%s), budget %d", round, n, res.Reason, budget)
	}
	bs, err := w.st.Beliefs(ctx, reorgSpace, "Mara")
	must(t, err)
	if len(bs) > w.cfg.Reorganize.BeliefsMax {
		t.Errorf("round %d: Mara holds %d beliefs, budget %d", round, len(bs), w.cfg.Reorganize.BeliefsMax)
	}
	seen := map[string]bool{}
	for _, b := range bs {
		if seen[b.Text] {
			t.Errorf("round %d: belief %q is held twice", round, b.Text)
		}
		seen[b.Text] = true
		if strings.Contains(b.Text, "ferryman") || strings.Contains(b.Text, "old road") {
			t.Errorf("round %d: belief %q kept, but its evidence is gone or faded", round, b.Text)
		}
	}
	rs, err := w.st.Reorganize(ctx, reorgCard, reorgSpace)
	must(t, err)
	if rs.Batches != 0 || rs.Tokens != 0 || rs.LastRunAt == nil {
		t.Errorf("round %d: reorganize state after a run = %+v, want the counters reset and the run recorded", round, rs)
	}
}

// TestReorganizeInvalidAnswer: a scribe whose answers to reorganize are
// not the JSON asked for twice (the answer and its repair) changes
// nothing — handbook, beliefs, perceptions, orphans, the owed counter —
// and the failure shows in the job table and in /memory's report.
func TestReorganizeInvalidAnswer(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			faithful := &memorytest.Faithful{CrossFacts: true}
			asked := 0
			w := newReorgWorld(t, b, func(req openaitest.Request) openaitest.Answer {
				if memorytest.IsReorganize(req) {
					asked++
					return openaitest.Answer{Text: "Pairs 1 and 2 look the same to me."}
				}
				return faithful.Respond(req)
			})
			w.seedRecord(t)
			for c := range reorgChats {
				id := reorgChatID(c)
				recap := reorgRecap(c, 12)
				must(t, w.st.InstallRecap(ctx, models.Recap{ChatID: id, CardID: reorgCard, SpaceID: reorgSpace, ChatName: "Chat " + id, Content: recap, Hash: memory.Hash(recap), Fingerprint: "1"}))
			}
			if _, err := w.mem.Consolidate(ctx, reorgCard, reorgSpace); err != nil {
				t.Fatal(err)
			}
			before, err := w.st.LoadMemory(ctx, reorgCard, reorgSpace)
			must(t, err)
			beliefsBefore, err := w.st.Beliefs(ctx, reorgSpace, "Mara")
			must(t, err)
			stBefore, err := w.st.Reorganize(ctx, reorgCard, reorgSpace)
			must(t, err)

			res, err := w.mem.Reorganize(ctx, reorgCard, reorgSpace)
			var rej *memory.RejectedError
			if !errors.As(err, &rej) || res.Outcome != memory.Failed {
				t.Fatalf("reorganize = %+v, %v; want a failure for the rejected answer", res, err)
			}
			if asked != 2 {
				t.Errorf("scribe asked %d times, want the answer and one repair", asked)
			}
			after, err := w.st.LoadMemory(ctx, reorgCard, reorgSpace)
			must(t, err)
			if after.Version() != before.Version() {
				t.Errorf("the handbook changed though the answer was refused")
			}
			beliefsAfter, err := w.st.Beliefs(ctx, reorgSpace, "Mara")
			must(t, err)
			if len(beliefsAfter) != len(beliefsBefore) {
				t.Errorf("beliefs: %d before, %d after a refused reorganize", len(beliefsBefore), len(beliefsAfter))
			}
			var folded, orphans int64
			must(t, w.st.DB().Model(&models.Perception{}).Where("text = gist").Count(&folded).Error)
			must(t, w.st.DB().Model(&models.RecallTerm{}).Where("item_id = ?", "gone-item").Count(&orphans).Error)
			if folded != 0 || orphans != 1 {
				t.Errorf("perceptions folded %d, orphans left %d; want 0 and 1 after a refused reorganize", folded, orphans)
			}
			stAfter, err := w.st.Reorganize(ctx, reorgCard, reorgSpace)
			must(t, err)
			if stAfter.Batches != stBefore.Batches || stAfter.Batches == 0 || stAfter.LastRunAt != nil {
				t.Errorf("reorganize state = %+v, want it still owed as before (%+v)", stAfter, stBefore)
			}
			rep, err := w.mem.Report(ctx, reorgCard, reorgSpace)
			must(t, err)
			found := false
			for _, f := range rep.Failures {
				found = found || f.Kind == memory.KindReorganize
			}
			if !found {
				t.Errorf("report failures = %+v, want the failing reorganize", rep.Failures)
			}
			if !rep.LastReorganize.IsZero() {
				t.Errorf("report says a reorganize ran at %s", rep.LastReorganize)
			}
		})
	}
}
