package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"troupe/belief"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/llm"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// reflectRig is one space with two cast cards (Mara in chat cA, Elias in
// chat cB), a player and a background character, whose record rows are
// written directly (scenes are not on main yet), and a memory service
// whose scribe is the fake model answering reflection's contract.
type reflectRig struct {
	t    testing.TB
	st   *models.Store
	mem  *memory.Service
	seq  int64
	mu   sync.Mutex
	bad  map[string]bool // characters whose reflection answer is garbage
	asks map[string]int  // reflection requests per character
	chks int
	// tokens counts the prompt and answer tokens of reflection's requests.
	tokens int
	// scribe is the fake model's client, for a second service.
	scribe llm.Scribe
	// gate, when set, is called with the character of each reflection
	// request before it is answered (outside mu).
	gate func(name string)
	// merge, when set, makes a request that shows two beliefs or more
	// merge the first two, sure, and every check find no contradiction.
	merge bool
	// hold, when set, is called with each belief check before it is
	// answered (outside mu).
	hold func()
}

const rigSpace = "discord:guild:9"

var (
	charRe = regexp.MustCompile(`<character>(.*?)</character>`)
	pRe    = regexp.MustCompile(`\[p:(\S+) turn=`)
	bRe    = regexp.MustCompile(`\[b:(\S+) (?:doubtful|likely|sure)\]`)
)

func newReflectRig(t testing.TB, b testenv.Backend, cfg belief.TriggerConfig) *reflectRig {
	t.Helper()
	ctx := context.Background()
	r := &reflectRig{t: t, st: testenv.OpenStore(t, b), bad: map[string]bool{}, asks: map[string]int{}}
	fake := openaitest.NewServer(t)
	fake.SetResponder(r.respond)
	client := llm.New(llm.Config{BaseURL: fake.URL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: -1}, nil)
	mc := memory.ConfigFrom(config.Default().Memory, "en")
	mc.Reflect = memory.ReflectConfig{Trigger: cfg, MaxChecks: 5}
	r.mem = memory.NewService(r.st, llm.Scribe{C: client}, mc, slog.New(slog.DiscardHandler))
	r.scribe = llm.Scribe{C: client}
	r.mem = r.service(cfg)
	db := r.st.DB()
	must(t, r.st.EnsureSpace(ctx, models.Space{ID: rigSpace, Platform: "discord", Kind: "guild", ExternalID: "9"}))
	for _, c := range []struct{ card, name, chat string }{{"mara", "Mara", "cA"}, {"elias", "Elias", "cB"}} {
		must(t, r.st.UpsertCard(ctx, models.Card{ID: c.card, Name: c.name, Language: "en", Data: "{}"}))
		must(t, db.Create(&models.Channel{ID: "discord:" + c.chat, Platform: "discord", ExternalID: c.chat, SpaceID: rigSpace, CardID: c.card, CurrentChatID: c.chat}).Error)
		must(t, db.Create(&models.Chat{ID: c.chat, ChannelID: "discord:" + c.chat, CardID: c.card, SpaceID: rigSpace, Name: c.chat, CreatedAt: time.Now(), ActiveAt: time.Now()}).Error)
		must(t, db.Create(&models.Character{ID: models.NewID(), SpaceID: rigSpace, Name: c.name, Kind: models.CharacterCast, CardID: c.card}).Error)
	}
	must(t, db.Create(&models.Character{ID: models.NewID(), SpaceID: rigSpace, Name: "Tess", Kind: models.CharacterPlayer}).Error)
	must(t, db.Create(&models.Character{ID: models.NewID(), SpaceID: rigSpace, Name: "Guard", Kind: models.CharacterBackground, ChatID: "cA"}).Error)
	return r
}

// turns records n turns of a chat, each with one sealed event that every
// named character perceived, and sets the ledger's place.
func (r *reflectRig) turns(chat string, n int, place string, who ...string) {
	r.t.Helper()
	r.said(chat, n, place, "%s sees Tess light the ferry lantern at %s.", who...)
}

// said is turns with the perceptions' text: format takes the character's
// name and the place.
func (r *reflectRig) said(chat string, n int, place, format string, who ...string) {
	r.t.Helper()
	db := r.st.DB()
	for range n {
		r.seq++
		ev := models.Event{ID: models.NewID(), ChatID: chat, SpaceID: rigSpace, MessageID: models.NewID(), Seq: r.seq, Kind: "action",
			Actor: "Tess", Text: "Tess lights the ferry lantern.", Place: place, Day: 1, Importance: 5, About: "the ferry lantern", Sealed: true}
		must(r.t, db.Create(&ev).Error)
		for _, c := range who {
			must(r.t, db.Create(&models.Perception{ID: models.NewID(), ChatID: chat, SpaceID: rigSpace, Character: c, EventID: ev.ID,
				Mode: "saw", Text: fmt.Sprintf(format, c, place), Importance: 5, Seq: r.seq}).Error)
		}
	}
	snap, _ := json.Marshal(map[string]string{"place": place})
	must(r.t, db.Save(&models.Ledger{ChatID: chat, Snapshot: string(snap)}).Error)
}

// service is a memory service over the rig's store and scribe, as another
// process would have.
func (r *reflectRig) service(cfg belief.TriggerConfig) *memory.Service {
	return memory.NewService(r.st, r.scribe, memory.Config{Language: "en",
		Reflect: memory.ReflectConfig{Trigger: cfg, MaxChecks: 5}}, slog.New(slog.DiscardHandler))
}

func (r *reflectRig) respond(req openaitest.Request) openaitest.Answer {
	if r.gate != nil {
		for _, m := range req.Messages {
			if c := charRe.FindStringSubmatch(m.Content); m.Role == "user" && c != nil {
				r.gate(c[1])
				break
			}
		}
	}
	if r.hold != nil && strings.HasPrefix(req.Messages[len(req.Messages)-1].Content, "<belief>") {
		r.hold()
	}
	a := r.answer(req)
	r.mu.Lock()
	for _, m := range req.Messages {
		r.tokens += openaitest.CountTokens(m.Content)
	}
	r.tokens += openaitest.CountTokens(a.Text)
	r.mu.Unlock()
	return a
}

func (r *reflectRig) answer(req openaitest.Request) openaitest.Answer {
	user := req.Messages[len(req.Messages)-1].Content
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m.Content
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.HasPrefix(user, "<belief>") {
		r.chks++
		if r.merge {
			return openaitest.Answer{Text: `{"compatible": true}`}
		}
		ps := pRe.FindAllStringSubmatch(user, -1)
		return openaitest.Answer{Text: fmt.Sprintf(`{"compatible": false, "against": [%q]}`, ps[0][1])}
	}
	name := charRe.FindStringSubmatch(user)[1]
	r.asks[name]++
	if r.bad[name] {
		return openaitest.Answer{Text: "I would rather not say."}
	}
	var ids []string
	for _, m := range pRe.FindAllStringSubmatch(user, -1) {
		ids = append(ids, fmt.Sprintf("%q", m[1]))
	}
	if bs := bRe.FindAllStringSubmatch(user, -1); r.merge && len(bs) > 1 {
		return openaitest.Answer{Text: fmt.Sprintf(`{"merge": [{"beliefs": [%q, %q], "text": "Mara reads omens at the quay.", "confidence": "sure"}]}`,
			bs[0][1], bs[1][1])}
	}
	if bs := bRe.FindAllStringSubmatch(user, -1); len(bs) > 0 {
		return openaitest.Answer{Text: fmt.Sprintf(`{"strengthen": [{"belief": %q, "supports": [%s]}]}`, bs[0][1], strings.Join(ids, ","))}
	}
	return openaitest.Answer{Text: fmt.Sprintf(`{"add": [{"text": "Tess keeps the ferry lantern lit for someone.", "confidence": "likely", "supports": [%s], "about": ["Tess"]}]}`, strings.Join(ids, ","))}
}

func (r *reflectRig) reflect(chat string, manual bool) memory.Result {
	r.t.Helper()
	res, err := r.mem.Reflect(context.Background(), chat, manual)
	if err != nil {
		r.t.Fatalf("reflect %s: %v", chat, err)
	}
	return res
}

func (r *reflectRig) asked(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asks[name]
}

// beliefs returns a character's beliefs, and checks that each cites only
// perceptions of that character.
func (r *reflectRig) beliefs(name string) []models.BeliefView {
	r.t.Helper()
	bs, err := r.st.Beliefs(context.Background(), rigSpace, name)
	must(r.t, err)
	for _, b := range bs {
		for _, e := range b.Evidence {
			var p models.Perception
			must(r.t, r.st.DB().Where("id = ?", e.Perception).Take(&p).Error)
			if p.Character != name {
				r.t.Fatalf("belief of %s cites a perception of %s", name, p.Character)
			}
		}
	}
	return bs
}

func (r *reflectRig) newCount(name string) int {
	r.t.Helper()
	cs, err := r.st.ReflectionCandidates(context.Background(), rigSpace)
	must(r.t, err)
	for _, c := range cs {
		if c.Name == name {
			return c.New
		}
	}
	return 0
}

func TestReflectTriggers(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			// every_turns: 19 turns are not enough, the 20th is.
			r.said("cA", 19, "the inn", "%s hears Tess sing at %s.", "Mara", "Tess", "Guard")
			if res := r.reflect("cA", false); res.Outcome != memory.Skipped || r.asked("Mara") != 0 {
				t.Fatalf("19 turns: %+v, %d requests", res, r.asked("Mara"))
			}
			r.said("cA", 1, "the inn", "%s hears Tess sing at %s.", "Mara", "Tess", "Guard")
			if res := r.reflect("cA", false); res.Outcome != memory.Written {
				t.Fatalf("20 turns: %+v", res)
			}
			if r.asked("Mara") != 1 || r.asked("Tess") != 0 || r.asked("Guard") != 0 {
				t.Fatalf("requests: %v (players and background characters never reflect)", r.asks)
			}
			bs := r.beliefs("Mara")
			if len(bs) != 1 || len(bs[0].Evidence) != 20 || bs[0].Confidence != belief.Likely {
				t.Fatalf("Mara's beliefs: %+v", bs)
			}
			if n := r.newCount("Mara"); n != 0 {
				t.Fatalf("Mara still has %d new perceptions", n)
			}
			// A scene change within min_turns waits; at min_turns it runs,
			// and the belief check lowers the belief and links the
			// contradicting perception.
			r.said("cA", 3, "the harbor", "%s watches the gulls over %s.", "Mara")
			r.turns("cA", 1, "the harbor", "Mara")
			if res := r.reflect("cA", false); res.Outcome != memory.Skipped {
				t.Fatalf("scene change within min_turns: %+v", res)
			}
			r.said("cA", 1, "the harbor", "%s watches the gulls over %s.", "Mara")
			if res := r.reflect("cA", false); res.Outcome != memory.Written || !strings.Contains(res.Reason, string(belief.WhySceneChange)) {
				t.Fatalf("scene change: %+v", res)
			}
			bs = r.beliefs("Mara")
			if len(bs) != 1 || bs[0].Confidence != belief.Doubtful {
				t.Fatalf("after the check: %+v", bs)
			}
			against := 0
			for _, e := range bs[0].Evidence {
				if e.Stance == belief.Contradicts {
					against++
				}
			}
			var checks int64
			must(t, r.st.DB().Model(&models.BeliefCheck{}).Count(&checks).Error)
			if against != 1 || checks != 1 {
				t.Fatalf("contradictions linked %d, checks recorded %d", against, checks)
			}
			// min_new: two new perceptions are not enough after 20 turns.
			r.turns("cA", 18, "the harbor")
			r.turns("cA", 2, "the harbor", "Mara")
			before := r.asked("Mara")
			if res := r.reflect("cA", false); res.Outcome != memory.Skipped || r.asked("Mara") != before {
				t.Fatalf("min_new: %+v", res)
			}
			// /reflect runs for every cast member with something new.
			if res := r.reflect("cA", true); res.Outcome != memory.Written || r.asked("Mara") != before+1 {
				t.Fatalf("manual: %+v", res)
			}
		})
	}
}

func TestReflectPerRun(t *testing.T) {
	b := testenv.Backends(t)[0]
	cfg := memory.ReflectConfigFrom(config.Default().Reflection).Trigger
	cfg.PerRun = 1
	r := newReflectRig(t, b, cfg)
	r.turns("cA", 20, "the inn", "Mara", "Elias")
	r.turns("cA", 1, "the inn", "Elias")
	if res := r.reflect("cA", false); res.Outcome != memory.Written {
		t.Fatalf("%+v", res)
	}
	if r.asked("Elias") != 1 || r.asked("Mara") != 0 {
		t.Fatalf("per_run 1 takes the most new first: %v", r.asks)
	}
}

func TestReflectAutoOff(t *testing.T) {
	b := testenv.Backends(t)[0]
	off := memory.ReflectConfigFrom(config.Default().Reflection).Trigger
	off.Auto = false
	r2 := newReflectRig(t, b, off)
	r2.turns("cA", 40, "the inn", "Mara")
	if res := r2.reflect("cA", false); res.Outcome != memory.Skipped || r2.asked("Mara") != 0 {
		t.Fatalf("auto off: %+v", res)
	}
	if res := r2.reflect("cA", true); res.Outcome != memory.Written || r2.asked("Mara") != 1 {
		t.Fatalf("auto off, /reflect: %+v", res)
	}
}

func TestReflectGarbageLeavesOthersWritten(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			r.bad["Elias"] = true
			r.turns("cA", 3, "the inn", "Mara")
			r.turns("cB", 3, "the mill", "Elias")
			_, err := r.mem.Reflect(context.Background(), "cA", true)
			if err == nil || !strings.Contains(err.Error(), "Elias") {
				t.Fatalf("err = %v, want Elias's failure", err)
			}
			if r.asked("Elias") != 2 {
				t.Fatalf("Elias asked %d times, want the request and one repair", r.asked("Elias"))
			}
			if bs := r.beliefs("Mara"); len(bs) != 1 {
				t.Fatalf("Mara's beliefs: %+v", bs)
			}
			if bs := r.beliefs("Elias"); len(bs) != 0 || r.newCount("Elias") != 3 {
				t.Fatalf("Elias: %d beliefs, %d new (work owed)", len(bs), r.newCount("Elias"))
			}
			fails, err := r.st.FailingJobs(context.Background(), "mara", rigSpace, "")
			must(t, err)
			if len(fails) != 1 || fails[0].Kind != memory.KindReflect || !strings.Contains(fails[0].Reason, "Elias") {
				t.Fatalf("failing jobs: %+v", fails)
			}
			r.bad["Elias"] = false
			if res := r.reflect("cA", true); res.Outcome != memory.Written || len(r.beliefs("Elias")) != 1 {
				t.Fatalf("retry: %+v", res)
			}
		})
	}
}

func TestForgetDeletesBeliefAndReflectionReformsIt(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			r.turns("cA", 2, "the inn", "Mara")
			r.turns("cB", 3, "the mill", "Mara")
			if res := r.reflect("cA", true); res.Outcome != memory.Written {
				t.Fatalf("%+v", res)
			}
			if bs := r.beliefs("Mara"); len(bs) != 1 || len(bs[0].Evidence) != 5 {
				t.Fatalf("before forget: %+v", bs)
			}
			if _, err := r.st.ForgetChat(ctx, "cA"); err != nil {
				t.Fatal(err)
			}
			if bs := r.beliefs("Mara"); len(bs) != 0 {
				t.Fatalf("after forget: %+v", bs)
			}
			if n := r.newCount("Mara"); n != 3 {
				t.Fatalf("cB's perceptions new again: %d, want 3", n)
			}
			if res := r.reflect("cB", true); res.Outcome != memory.Written {
				t.Fatalf("%+v", res)
			}
			bs := r.beliefs("Mara")
			if len(bs) != 1 || len(bs[0].Evidence) != 3 {
				t.Fatalf("re-formed: %+v", bs)
			}
			// Deleting it by hand makes its perceptions new again.
			if _, err := r.st.DeleteBelief(ctx, bs[0].ID); err != nil {
				t.Fatal(err)
			}
			if n := r.newCount("Mara"); n != 3 || len(r.beliefs("Mara")) != 0 {
				t.Fatalf("after delete: %d new", n)
			}
		})
	}
}

// TestReflectSixtyTurnsOwnPerceptions: two cast members in one 60-turn
// scene of chat cA (two cards in one space, record rows written directly);
// each one's beliefs cite only its own perceptions.
func TestReflectSixtyTurnsOwnPerceptions(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			for i := range 3 {
				r.turns("cA", 20, "the inn", "Mara", "Elias", "Tess")
				if res := r.reflect("cA", false); res.Outcome != memory.Written {
					t.Fatalf("run %d: %+v", i, res)
				}
			}
			if r.asked("Mara") != 3 || r.asked("Elias") != 3 {
				t.Fatalf("requests: %v", r.asks)
			}
			t.Logf("3 runs of 2 characters: %d reflection requests, %d belief checks, %d tokens (prompt and answer, four runes a token)",
				r.asked("Mara")+r.asked("Elias"), r.chks, r.tokens)
			for _, name := range []string{"Mara", "Elias"} {
				if bs := r.beliefs(name); len(bs) == 0 {
					t.Fatalf("%s formed no belief", name)
				}
			}
		})
	}
}

// Two chats of one space reflect one at a time, even from two processes
// (two services sharing Redis locks), while a chat of another space
// reflects in parallel: the second chat of the space waits, then finds its
// characters' perceptions already reflected on, so nobody is asked twice.
func TestReflectSerializesPerSpace(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			ctx := context.Background()
			url := ""
			if testenv.Available() {
				url = testenv.FreshRedisURL(t)
			}
			rdb, err := jobs.OpenRedis(ctx, url)
			must(t, err)
			t.Cleanup(func() { rdb.Close() })
			// Two processes: their own services and lock owners.
			r.mem.UseLocker(jobs.NewLocker(rdb))
			other := r.service(memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			other.UseLocker(jobs.NewLocker(rdb))
			// A second space with its own card, chat and character.
			const space2 = "discord:guild:8"
			db := r.st.DB()
			must(t, r.st.EnsureSpace(ctx, models.Space{ID: space2, Platform: "discord", Kind: "guild", ExternalID: "8"}))
			must(t, r.st.UpsertCard(ctx, models.Card{ID: "nils", Name: "Nils", Language: "en", Data: "{}"}))
			must(t, db.Create(&models.Channel{ID: "discord:cC", Platform: "discord", ExternalID: "cC", SpaceID: space2, CardID: "nils", CurrentChatID: "cC"}).Error)
			must(t, db.Create(&models.Chat{ID: "cC", ChannelID: "discord:cC", CardID: "nils", SpaceID: space2, Name: "cC", CreatedAt: time.Now(), ActiveAt: time.Now()}).Error)
			must(t, db.Create(&models.Character{ID: models.NewID(), SpaceID: space2, Name: "Nils", Kind: models.CharacterCast, CardID: "nils"}).Error)
			r.turns("cA", 3, "the inn", "Mara", "Elias")
			for range 3 {
				r.seq++
				ev := models.Event{ID: models.NewID(), ChatID: "cC", SpaceID: space2, MessageID: models.NewID(), Seq: r.seq, Kind: "action",
					Actor: "Nils", Text: "Nils rows across.", Place: "the river", Day: 1, Importance: 5, Sealed: true}
				must(t, db.Create(&ev).Error)
				must(t, db.Create(&models.Perception{ID: models.NewID(), ChatID: "cC", SpaceID: space2, Character: "Nils", EventID: ev.ID,
					Mode: "saw", Text: "Nils rows across the river.", Importance: 5, Seq: r.seq}).Error)
			}

			entered := make(chan string, 16)
			release := make(chan struct{})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			// A failure frees the held requests, so the fake can close.
			t.Cleanup(free)
			r.gate = func(name string) {
				entered <- name
				if name != "Nils" {
					<-release
				}
			}
			results := make(chan error, 3)
			run := func(svc *memory.Service, chat string) {
				_, err := svc.Reflect(ctx, chat, true)
				results <- err
			}
			go run(r.mem, "cA")
			first := waitName(t, entered)
			if first == "Nils" {
				t.Fatalf("the other space's character reflected before cA started")
			}
			// cA is inside the scribe for its space; cB (another process)
			// and cC (another space) start now.
			go run(other, "cB")
			go run(other, "cC")
			// Positive control: a reflection started after cB's reaches the
			// scribe while cA still holds its space.
			if got := waitName(t, entered); got != "Nils" {
				t.Fatalf("%s was asked while cA's reflection of the same space was in the scribe", got)
			}
			free()
			for range 3 {
				select {
				case err := <-results:
					must(t, err)
				case <-time.After(30 * time.Second):
					t.Fatal("a reflection did not finish")
				}
			}
			// cA reflected both of the space's characters; cB waited for it
			// and found nothing new, so nobody was asked twice.
			for _, name := range []string{"Mara", "Elias"} {
				if n := r.asked(name); n != 1 {
					t.Errorf("%s asked %d times, want once: two chats of the space reflected at once", name, n)
				}
				if bs := r.beliefs(name); len(bs) != 1 {
					t.Errorf("%s has %d beliefs, want 1", name, len(bs))
				}
			}
		})
	}
}

// waitName waits for the next reflection request's character.
func waitName(t *testing.T, entered <-chan string) string {
	t.Helper()
	select {
	case name := <-entered:
		return name
	case <-time.After(30 * time.Second):
		t.Fatal("no reflection request reached the scribe")
		return ""
	}
}

// TestReflectManyBeliefsKeepsTheirLinks: with more beliefs than a request
// shows, a round reads the evidence of the beliefs it checks and shows
// alone; the beliefs it strengthens and the ones its checks doubt keep
// every link they had, and the others are not touched.
func TestReflectManyBeliefsKeepsTheirLinks(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			ctx := context.Background()
			db := r.st.DB()
			r.said("cA", 3, "the quay", "%s sees the tide turn at %s.", "Mara")
			var old []models.Perception
			must(t, db.Where("character_name = ?", "Mara").Order("seq").Find(&old).Error)
			must(t, db.Model(&models.Perception{}).Where("character_name = ?", "Mara").Update("reflected", true).Error)
			const n = belief.DefaultPromptBeliefs + 8
			for i := range n {
				id := models.NewID()
				must(t, db.Create(&models.Belief{ID: id, SpaceID: rigSpace, Character: "Mara", Text: fmt.Sprintf("Mara fears omen%d at the quay.", i),
					Confidence: int(belief.Likely), FormedSeq: 3, ChangedSeq: 3, CreatedAt: time.Now(), UpdatedAt: time.Now()}).Error)
				for _, p := range old {
					must(t, db.Create(&models.BeliefEvidence{BeliefID: id, PerceptionID: p.ID, Stance: string(belief.Supports), Seq: p.Seq, ChatID: "cA"}).Error)
				}
			}
			r.said("cA", 1, "the quay", "%s sees omen3 in the fog at %s.", "Mara")
			r.said("cA", 1, "the quay", "%s hears of omen5 at %s.", "Mara")
			if res := r.reflect("cA", true); res.Outcome != memory.Written {
				t.Fatalf("%+v", res)
			}
			bs, err := r.st.Beliefs(ctx, rigSpace, "Mara")
			must(t, err)
			if len(bs) != n {
				t.Fatalf("%d beliefs, want %d", len(bs), n)
			}
			doubted, grown := 0, 0
			for _, bl := range bs {
				links := map[string]belief.Stance{}
				for _, e := range bl.Evidence {
					links[e.Perception] = e.Stance
				}
				for _, p := range old {
					if links[p.ID] != belief.Supports {
						t.Errorf("belief %q lost its link to %s: %v", bl.Text, p.ID, bl.Evidence)
					}
				}
				switch extra := len(bl.Evidence) - len(old); {
				case extra == 1 && bl.Evidence[len(bl.Evidence)-1].Stance == belief.Contradicts:
					doubted++
				case extra == 2:
					grown++
				case extra != 0:
					t.Errorf("belief %q has %d links: %v", bl.Text, len(bl.Evidence), bl.Evidence)
				}
			}
			if r.chks == 0 || doubted != r.chks || grown != 1 {
				t.Errorf("%d checks, %d beliefs doubted, %d strengthened; want one doubted a check and one strengthened", r.chks, doubted, grown)
			}
		})
	}
}

// TestReflectMergeCarriesEveryLink: a round reads only its beliefs' links
// to the perceptions it shows, but a merge of two beliefs carries all
// their links, the old ones it never showed too (a /forget of their chat
// must find the merged belief), and stays sure because those span turns.
func TestReflectMergeCarriesEveryLink(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			r.merge = true
			ctx := context.Background()
			db := r.st.DB()
			r.said("cA", 4, "the quay", "%s sees the tide turn at %s.", "Mara")
			var old []models.Perception
			must(t, db.Where("character_name = ?", "Mara").Order("seq").Find(&old).Error)
			must(t, db.Model(&models.Perception{}).Where("character_name = ?", "Mara").Update("reflected", true).Error)
			var merged []string
			for i := range 2 {
				id := models.NewID()
				merged = append(merged, id)
				must(t, db.Create(&models.Belief{ID: id, SpaceID: rigSpace, Character: "Mara", Text: fmt.Sprintf("Mara fears omen%d at the quay.", i),
					Confidence: int(belief.Sure), FormedSeq: 4, ChangedSeq: 4, CreatedAt: time.Now(), UpdatedAt: time.Now()}).Error)
				for _, p := range old[i*2 : i*2+2] {
					must(t, db.Create(&models.BeliefEvidence{BeliefID: id, PerceptionID: p.ID, Stance: string(belief.Supports), Seq: p.Seq, ChatID: "cA"}).Error)
				}
			}
			r.said("cA", 1, "the quay", "%s sees omen0 and omen1 in the fog at %s.", "Mara")
			if res := r.reflect("cA", true); res.Outcome != memory.Written {
				t.Fatalf("%+v", res)
			}
			bs, err := r.st.Beliefs(ctx, rigSpace, "Mara")
			must(t, err)
			if len(bs) != 1 || !slices.Equal(slices.Sorted(slices.Values(bs[0].MergedFrom)), slices.Sorted(slices.Values(merged))) {
				t.Fatalf("beliefs after the merge: %+v", bs)
			}
			links := map[string]bool{}
			for _, e := range bs[0].Evidence {
				links[e.Perception] = true
			}
			for _, p := range old {
				if !links[p.ID] {
					t.Errorf("the merged belief lost the link to %q (turn %d): %v", p.Text, p.Seq, bs[0].Evidence)
				}
			}
			if len(links) != len(old) {
				t.Errorf("the merged belief has %d links, want the %d of the beliefs it merged", len(links), len(old))
			}
			if bs[0].Confidence != belief.Sure {
				t.Errorf("merged confidence %v, want sure (its links span turns)", bs[0].Confidence)
			}
			if _, err := r.st.ForgetChat(ctx, "cA"); err != nil {
				t.Fatal(err)
			}
			if bs, err := r.st.Beliefs(ctx, rigSpace, "Mara"); err != nil || len(bs) != 0 {
				t.Errorf("after forgetting the chat: %+v (%v)", bs, err)
			}
		})
	}
}

// BenchmarkReflectManyBeliefs: one reflection round of a character with
// 115 beliefs of 100 links each and 500 perceptions before, as troupe
// bench's character has after 2,000 turns; two new perceptions a round.
// The fake scribe answers at once: this is the round's own reads, writes
// and work (go test -run '^$' -bench ReflectManyBeliefs -benchmem ./memory/).
func BenchmarkReflectManyBeliefs(b *testing.B) {
	be := testenv.Backends(b)[0]
	r := newReflectRig(b, be, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
	db := r.st.DB()
	r.said("cA", 500, "the quay", "%s sees the tide turn at %s.", "Mara")
	var old []models.Perception
	must(b, db.Where("character_name = ?", "Mara").Order("seq").Find(&old).Error)
	must(b, db.Model(&models.Perception{}).Where("character_name = ?", "Mara").Update("reflected", true).Error)
	for i := range 115 {
		id := models.NewID()
		must(b, db.Create(&models.Belief{ID: id, SpaceID: rigSpace, Character: "Mara", Text: fmt.Sprintf("Mara fears omen%d at the quay.", i),
			Confidence: int(belief.Likely), FormedSeq: 500, ChangedSeq: 500, CreatedAt: time.Now(), UpdatedAt: time.Now()}).Error)
		ev := make([]models.BeliefEvidence, 0, 100)
		for j := range 100 {
			p := old[(i*7+j*5)%len(old)]
			ev = append(ev, models.BeliefEvidence{BeliefID: id, PerceptionID: p.ID, Stance: string(belief.Supports), Seq: p.Seq, ChatID: "cA"})
		}
		must(b, db.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(ev, 100).Error)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for i := range b.N {
		b.StopTimer()
		r.said("cA", 1, "the quay", fmt.Sprintf("%%s sees omen%d in the fog at %%s.", i%115), "Mara")
		r.said("cA", 1, "the quay", fmt.Sprintf("%%s hears of omen%d at %%s.", (i+50)%115), "Mara")
		b.StartTimer()
		before := processCPU(b)
		if res := r.reflect("cA", true); res.Outcome != memory.Written {
			b.Fatalf("%+v", res)
		}
		cpu += processCPU(b) - before
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// TestReflectAsksItsChecksAtOnce: a round's belief checks are asked side
// by side, not one after another (a space's reflections wait for each
// other's rounds). The fake holds each check until the others arrive, or
// two seconds pass without one: asked one at a time, only one is ever in
// flight. What the checks find is applied as before: every checked belief
// is doubted by its contradiction.
func TestReflectAsksItsChecksAtOnce(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			db := r.st.DB()
			r.said("cA", 2, "the quay", "%s sees the tide turn at %s.", "Mara")
			must(t, db.Model(&models.Perception{}).Where("character_name = ?", "Mara").Update("reflected", true).Error)
			for i := range 4 {
				must(t, db.Create(&models.Belief{ID: models.NewID(), SpaceID: rigSpace, Character: "Mara", Text: fmt.Sprintf("Mara fears omen%d at the quay.", i),
					Confidence: int(belief.Likely), FormedSeq: 2, ChangedSeq: 2, CreatedAt: time.Now(), UpdatedAt: time.Now()}).Error)
			}
			r.said("cA", 1, "the quay", "%s sees omen0, omen1, omen2 and omen3 in the fog at %s.", "Mara")

			var mu sync.Mutex
			inFlight, most := 0, 0
			arrived := make(chan struct{}, 16)
			r.hold = func() {
				mu.Lock()
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				arrived <- struct{}{}
				// Held until no other check arrives for two seconds.
				for quiet := time.NewTimer(2 * time.Second); ; {
					select {
					case <-arrived:
						quiet.Reset(2 * time.Second)
						continue
					case <-quiet.C:
					}
					break
				}
				mu.Lock()
				inFlight--
				mu.Unlock()
			}
			if res := r.reflect("cA", true); res.Outcome != memory.Written {
				t.Fatalf("%+v", res)
			}
			if r.chks < 2 {
				t.Fatalf("%d belief checks; the case needs several", r.chks)
			}
			if most < 2 {
				t.Errorf("%d belief checks, at most %d in flight at once: they were asked one after another", r.chks, most)
			}
			bs, err := r.st.Beliefs(context.Background(), rigSpace, "Mara")
			must(t, err)
			doubted := 0
			for _, bl := range bs {
				for _, e := range bl.Evidence {
					if e.Stance == belief.Contradicts {
						doubted++
					}
				}
			}
			if doubted != r.chks {
				t.Errorf("%d checks answered with a contradiction, %d beliefs doubted", r.chks, doubted)
			}
		})
	}
}

// TestReflectCountsNewPerceptionsOnlyWhenDue: whether a chat's automatic
// reflection is due is first decided by its turns and scene; the space's
// new perceptions (its whole backlog) are counted only when it is, so the
// check after every record of a busy space stays cheap, and a run counts
// them once, under its lock.
func TestReflectCountsNewPerceptionsOnlyWhenDue(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newReflectRig(t, b, memory.ReflectConfigFrom(config.Default().Reflection).Trigger)
			var counts atomic.Int32
			spy := func(db *gorm.DB) {
				if strings.Contains(db.Statement.SQL.String(), "COUNT(*) AS n") {
					counts.Add(1)
				}
			}
			r.st.StopMaintenance()
			cb := r.st.DB().Callback()
			must(t, cb.Row().After("gorm:row").Register("test:spy_row", spy))
			must(t, cb.Query().After("gorm:query").Register("test:spy_query", spy))
			ctx := context.Background()
			chat, err := r.st.Chat(ctx, "cA")
			must(t, err)
			r.said("cA", 19, "the inn", "%s hears Tess sing at %s.", "Mara")
			for range 3 {
				if owed, err := r.mem.ReflectionOwed(ctx, chat); err != nil || owed {
					t.Fatalf("19 turns: owed %v, %v", owed, err)
				}
				if res := r.reflect("cA", false); res.Outcome != memory.Skipped {
					t.Fatalf("19 turns: %+v", res)
				}
			}
			if n := counts.Load(); n != 0 {
				t.Fatalf("%d counts of the new perceptions while no reflection was due", n)
			}
			r.said("cA", 1, "the inn", "%s hears Tess sing at %s.", "Mara")
			if owed, err := r.mem.ReflectionOwed(ctx, chat); err != nil || !owed {
				t.Fatalf("20 turns: owed %v, %v", owed, err)
			}
			owed := counts.Load()
			if owed == 0 {
				t.Fatal("a due reflection did not count the new perceptions: the spy sees nothing")
			}
			// The run found owed counts once more, under its lock.
			if res := r.reflect("cA", false); res.Outcome != memory.Written {
				t.Fatalf("20 turns: %+v", res)
			}
			if n := counts.Load() - owed; n != 1 {
				t.Errorf("the reflection counted the new perceptions %d times, want once", n)
			}
		})
	}
}
