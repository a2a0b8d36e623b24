package memory_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/worked/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// jBPhrases are found only in chat jB.
var jBPhrases = []string{"tea fields", "pear tree", "letter to the north", "slow daily conversation", "early-spring tea"}

type worked struct {
	st     *models.Store
	fake   *openaitest.Server
	scribe *memorytest.Scribe
	mem    *memory.Service
	// log is what the memory service logged.
	log *testenv.Buffer
}

// newWorked stores chats jA and jB of card qingwu in one space, with their
// messages and recaps, and a memory service whose scribe answers from the
// fake server.
func newWorked(t *testing.T, b testenv.Backend) *worked {
	t.Helper()
	ctx := context.Background()
	w := &worked{st: testenv.OpenStore(t, b), fake: openaitest.NewServer(t), scribe: &memorytest.Scribe{}, log: &testenv.Buffer{}}
	w.fake.SetResponder(w.scribe.Respond)
	client := llm.New(llm.Config{BaseURL: w.fake.URL(), Model: "m", Timeout: 2 * time.Second, MaxRetries: -1}, nil)
	w.mem = memory.NewService(w.st, llm.Scribe{C: client}, memory.ConfigFrom(config.Default().Memory, "en"), slog.New(slog.NewTextHandler(w.log, nil)))
	db := w.st.DB()
	must(t, w.st.UpsertCard(ctx, models.Card{ID: "qingwu", Name: "Qingwu", Language: "en", Data: "{}"}))
	must(t, w.st.EnsureSpace(ctx, models.Space{ID: "discord:guild:1", Platform: "discord", Kind: "guild", ExternalID: "1"}))
	for _, c := range []struct{ id, name, text string }{
		{"jA", "Rainy night at the inn", "I ask after Shen Huaijin; she shows me the old umbrella."},
		{"jB", "A letter from the tea fields", "I ask about the tea fields and the pear tree; I promise to carry the letter to the north. I like slow daily conversation."},
	} {
		must(t, db.Create(&models.Channel{ID: "discord:chan-" + c.id, Platform: "discord", ExternalID: "chan-" + c.id, SpaceID: "discord:guild:1", CardID: "qingwu", CurrentChatID: c.id}).Error)
		must(t, db.Create(&models.Chat{ID: c.id, ChannelID: "discord:chan-" + c.id, CardID: "qingwu", SpaceID: "discord:guild:1", Name: c.name, HeadID: c.id + "-m1", CreatedAt: time.Now(), ActiveAt: time.Now()}).Error)
		must(t, db.Create(&models.Message{ID: c.id + "-m1", ChatID: c.id, Role: "user", AuthorName: "Traveler", Content: c.text}).Error)
		must(t, db.Create(&models.Summary{ID: c.id + "-s1", ChatID: c.id, CoversThroughID: c.id + "-m1", Content: "## Story so far\n" + c.text}).Error)
		must(t, db.Create(&models.Ledger{ChatID: c.id, Snapshot: `{"note":"` + c.text + `"}`}).Error)
		must(t, db.Create(&models.MemoryChunk{ID: c.id + "-k1", ChatID: c.id, ThroughID: c.id + "-m1", Content: c.text}).Error)
		recap := readFixture(t, "recap_"+c.id+".md")
		must(t, w.st.InstallRecap(ctx, models.Recap{ChatID: c.id, CardID: "qingwu", SpaceID: "discord:guild:1", ChatName: c.name, Content: recap, Hash: memory.Hash(recap), Fingerprint: "fp"}))
	}
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The worked example's hand edits: a person wrote them through the hard
// path (`troupe memory edit`) before the fixture's consolidation.
const (
	handHandbook = "# Characters (across chats)\n- Qingwu's sister comes to the inn on market days."
	handResident = "# Earlier chats\n- Keep Qingwu's replies short."
)

// consolidateFixture installs the worked example's hand edits by hand, then
// its handbook and resident through a real consolidation whose scribe
// answers with the fixture (the cross-chat sections; the engine builds the
// chat blocks from the recaps).
func (w *worked) consolidateFixture(t *testing.T) {
	t.Helper()
	hb, rs := handHandbook, handResident
	must(t, w.st.EditMemory(context.Background(), "qingwu", "discord:guild:1", &hb, &rs, "edited by hand"))
	answer := fmt.Sprintf("%s\n%s\n%s\n%s", memory.Markers["en"][0], readFixture(t, "handbook.md"), memory.Markers["en"][1], readFixture(t, "resident.md"))
	w.fake.Script(openaitest.Answer{Text: answer})
	res, err := w.mem.Consolidate(context.Background(), "qingwu", "discord:guild:1")
	if err != nil || res.Outcome != memory.Written {
		t.Fatalf("consolidate: %+v, %v", res, err)
	}
}

func blockOf(handbook, id string) string {
	start := strings.Index(handbook, "# Chat: ")
	for start >= 0 {
		end := strings.Index(handbook[start+1:], "\n# ")
		block := handbook[start:]
		if end >= 0 {
			block = handbook[start : start+1+end]
		}
		if strings.Contains(strings.SplitN(block, "\n", 2)[0], "("+id+")") {
			return block
		}
		next := strings.Index(handbook[start+1:], "# Chat: ")
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return ""
}

// checkForgotten checks that nothing only jB supported is left.
func checkForgotten(t *testing.T, st *models.Store, when string, blockA string) {
	t.Helper()
	mem, err := st.LoadMemory(context.Background(), "qingwu", "discord:guild:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{mem.Handbook, mem.Resident} {
		for _, p := range jBPhrases {
			if strings.Contains(strings.ToLower(file), p) {
				t.Errorf("%s: %q is still in memory", when, p)
			}
		}
		if strings.Contains(file, "[chat:jB]") {
			t.Errorf("%s: a [chat:jB] tag is left", when)
		}
	}
	// An entry jA and jB both supported may hold jB's words beside jA's
	// (the fixture's "its tea fields lie south"): it goes whole, and the
	// consolidation writes jA's facts again from jA's live recap. An entry
	// of jA's alone stays as it was.
	if strings.Contains(mem.Handbook, "keeper of the Rain-Listening Inn, quiet and restrained. [chat:jA]") {
		t.Errorf("%s: the entry jB also supported stayed, without jB's tag:\n%s", when, mem.Handbook)
	}
	if !strings.Contains(mem.Handbook, "- Shen Huaijin: left from the north ferry ten years ago; never wrote. [chat:jA]\n") {
		t.Errorf("%s: the entry jA alone supports lost its [chat:jA] tag or its text:\n%s", when, mem.Handbook)
	}
	if !strings.Contains(mem.Handbook, "- Qingwu's sister comes to the inn on market days.") || !strings.Contains(mem.Resident, "- Keep Qingwu's replies short.") {
		t.Errorf("%s: a hand-written line was lost", when)
	}
	if got := blockOf(mem.Handbook, "jA"); strings.TrimSpace(got) != strings.TrimSpace(blockA) {
		t.Errorf("%s: jA's block changed:\n%s\n--- was ---\n%s", when, got, blockA)
	}
	if blockOf(mem.Handbook, "jB") != "" {
		t.Errorf("%s: jB's block is still there", when)
	}
}

func TestWorkedExampleForget(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, b)
			w.consolidateFixture(t)
			before, _ := w.st.LoadMemory(ctx, "qingwu", "discord:guild:1")
			blockA := blockOf(before.Handbook, "jA")
			if blockA == "" || blockOf(before.Handbook, "jB") == "" {
				t.Fatalf("fixture not installed:\n%s", before.Handbook)
			}
			calls := w.fake.Count()
			if _, err := w.mem.ForgetChat(ctx, "jB"); err != nil {
				t.Fatal(err)
			}
			if w.fake.Count() != calls {
				t.Errorf("forget called the model")
			}
			checkForgotten(t, w.st, "right after forget", blockA)
			checkNoTrace(t, w.st, "jB", jBPhrases)
			// The consolidation that follows lists jB as deleted and keeps
			// everything the check above requires.
			w.fake.SetResponder(w.scribe.Respond)
			res, err := w.mem.Consolidate(ctx, "qingwu", "discord:guild:1")
			if err != nil || res.Outcome != memory.Written {
				t.Fatalf("consolidate after forget: %+v, %v", res, err)
			}
			last, _ := w.fake.Last()
			if !strings.Contains(last.Messages[1].Content, "<deleted-chats>\n- jB\n</deleted-chats>") {
				t.Errorf("the consolidation prompt does not list jB as deleted")
			}
			checkForgotten(t, w.st, "after consolidation", blockA)
			checkNoTrace(t, w.st, "jB", jBPhrases)
			mem, _ := w.st.LoadMemory(ctx, "qingwu", "discord:guild:1")
			if len(mem.Entries) != 1 || mem.Entries[0].ChatID != "jA" {
				t.Errorf("manifest after consolidation = %+v, want only jA", mem.Entries)
			}
			// Forgetting twice is harmless.
			if _, err := w.mem.ForgetChat(ctx, "jB"); !errors.Is(err, models.ErrNotFound) {
				t.Errorf("second forget: err = %v, want ErrNotFound", err)
			}
		})
	}
}

// checkNoTrace searches every text column of every table for the phrases of
// a forgotten chat: only its tombstone may remain.
func checkNoTrace(t *testing.T, st *models.Store, chatID string, phrases []string) {
	t.Helper()
	db := st.DB()
	for _, table := range models.All() {
		var rows []map[string]any
		if err := db.Model(table).Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			for col, v := range row {
				s := strings.ToLower(fmt.Sprint(v))
				for _, p := range phrases {
					if strings.Contains(s, p) {
						t.Errorf("%T.%s still holds %q", table, col, p)
					}
				}
				if _, isTomb := table.(*models.Tombstone); !isTomb && col != "chat_id" && s == strings.ToLower(chatID) {
					t.Errorf("%T.%s still names the forgotten chat", table, col)
				}
			}
		}
	}
	if _, err := st.Tombstone(context.Background(), chatID); err != nil {
		t.Errorf("no tombstone for %s: %v", chatID, err)
	}
}

func TestConsolidationRejectsMalformedOutput(t *testing.T) {
	hb, rs := readFixture(t_(), "handbook.md"), readFixture(t_(), "resident.md")
	mk := memory.Markers["en"]
	ok := func(h, r string) string { return mk[0] + "\n" + h + "\n" + mk[1] + "\n" + r }
	cases := map[string]openaitest.Answer{
		"missing marker":        {Text: hb + "\n" + mk[1] + "\n" + rs},
		"tag names a stranger":  {Text: ok(hb+"\n- Someone else. [chat:zz]", rs)},
		"writes a chat heading": {Text: ok("## Chat: Rainy night at the inn (jA)\nSource: chat jA\n\n"+hb, rs)},
		"untagged line":         {Text: ok(hb+"\n- Qingwu hums while she sweeps.", rs)},
		"dropped hand edit":     {Text: ok(strings.Replace(hb, "- Qingwu's sister comes to the inn on market days.\n", "", 1), rs)},
		"resident too long":     {Text: ok(hb, rs+"\n"+strings.Repeat("- filler line that goes on and on [chat:jA]\n", 40))},
		"timeout":               {Fault: openaitest.FaultHang},
		"empty resident":        {Text: ok(hb, "")},
		"malformed tag":         {Text: ok(hb+"\n- Someone else. [chat: jA]", rs)},
		"deleted tag after all": {},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, testenv.Backends(t)[0])
			w.consolidateFixture(t)
			if name == "deleted tag after all" {
				if _, err := w.mem.ForgetChat(ctx, "jB"); err != nil {
					t.Fatal(err)
				}
				bad = openaitest.Answer{Text: ok(strings.Replace(hb, "(jB)", "(jX)", 1), rs)}
			} else {
				// A changed recap of jA owes a consolidation.
				recap := readFixture(t, "recap_jA.md") + "\n- one more fact"
				must(t, w.st.InstallRecap(ctx, models.Recap{ChatID: "jA", CardID: "qingwu", SpaceID: "discord:guild:1", ChatName: "Rainy night at the inn", Content: recap, Hash: memory.Hash(recap), Fingerprint: "fp2"}))
			}
			before, _ := w.st.LoadMemory(ctx, "qingwu", "discord:guild:1")
			calls := w.fake.Count()
			w.fake.Script(bad, bad)
			_, err := w.mem.Consolidate(ctx, "qingwu", "discord:guild:1")
			if err == nil {
				t.Fatal("a malformed consolidation was accepted")
			}
			if bad.Fault == openaitest.FaultNone && w.fake.Count()-calls != 2 {
				t.Errorf("made %d calls, want the answer and one repair", w.fake.Count()-calls)
			}
			after, _ := w.st.LoadMemory(ctx, "qingwu", "discord:guild:1")
			if after.Version() != before.Version() || fmt.Sprint(after.Entries) != fmt.Sprint(before.Entries) {
				t.Errorf("memory or manifest changed after a rejected consolidation")
			}
			rec, _ := w.st.Job(ctx, memory.KindConsolidate, "qingwu|discord:guild:1")
			if rec.Outcome != "failed" || rec.Reason == "" {
				t.Errorf("job record = %+v, want a recorded failure", rec)
			}
		})
	}
}

// t_ gives fixtures to a table built before the subtests run.
func t_() *testing.T { return &testing.T{} }

func TestTwoSpacesNeverMix(t *testing.T) {
	ctx := context.Background()
	w := newWorked(t, testenv.Backends(t)[0])
	w.consolidateFixture(t)
	other, err := w.st.Resident(ctx, "qingwu", "discord:guild:2")
	if err != nil || other != "" {
		t.Errorf("another space's resident = %q (%v), want empty", other, err)
	}
	stored, _ := w.st.Resident(ctx, "qingwu", "discord:guild:1")
	mine := w.mem.FitResident("en", stored, 0)
	if !strings.Contains(mine, "Rain-Listening") && !strings.Contains(mine, "Huaijin") {
		t.Errorf("own space's resident missing: %q", mine)
	}
	if strings.Contains(mine, "[chat:") {
		t.Errorf("tags not stripped from the injected resident")
	}
}
