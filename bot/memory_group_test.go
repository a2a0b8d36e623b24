package bot_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/bot"
	"troupe/fakes/memorytest"
	"troupe/models"
	"troupe/models/testenv"
)

// confidingSink is a sink of a platform that can answer the author alone:
// what it confides and what it shows the channel are kept apart.
type confidingSink struct {
	discardSink
	confided []string
}

func (s *confidingSink) Confide(_ context.Context, text string) error {
	s.confided = append(s.confided, text)
	return nil
}

// guildSay has author say text in a guild channel and waits for the reply.
func (r *recordRig) guildSay(t *testing.T, channel string, n int, author, text string) {
	t.Helper()
	in := bot.Inbound{Channel: guildRef(channel, ""), AuthorID: strings.ToLower(author), AuthorName: author,
		MessageID: fmt.Sprintf("%s-%d", channel, n), Text: text, Mentioned: true}
	if err := handle(context.Background(), r.p, in, &discardSink{}); err != nil {
		t.Fatalf("%s message %d: %v", channel, n, err)
	}
}

// guildChat is the current chat of a guild channel.
func (r *recordRig) guildChat(t *testing.T, channel string) models.Chat {
	t.Helper()
	ch, err := r.st.Channel(context.Background(), guildRef(channel, "").Key())
	if err != nil {
		t.Fatal(err)
	}
	chat, err := r.st.Chat(context.Background(), ch.CurrentChatID)
	if err != nil {
		t.Fatal(err)
	}
	return chat
}

// recordAndReflect records a chat's owed turns and reflects on them, the
// new belief saying what *believe holds.
func (r *recordRig) recordAndReflect(t *testing.T, chatID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := r.mem.Record(ctx, chatID); err != nil {
		t.Fatalf("record %s: %v", chatID, err)
	}
	if _, err := r.mem.Reflect(ctx, chatID, true); err != nil {
		t.Fatalf("reflect %s: %v", chatID, err)
	}
}

// TestMemoryInAGuildChannelShowsOnlyThisChat: Bob, a plain member, asks
// /memory in a public channel of a guild where Maren also plays in the
// vault channel. He alone gets the answer, and it holds the belief Maren
// formed from this channel's lines (the control), but none formed from the
// vault's lines or from both channels, no ledger, no failure's reason, and
// the resident summary only as far as a turn here injects it. Where the
// platform cannot answer him alone, he is refused with nothing of it.
func TestMemoryInAGuildChannelShowsOnlyThisChat(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newRecordRig(t, b, 100)
			var mu sync.Mutex
			belief := ""
			believe := func(s string) { mu.Lock(); belief = s; mu.Unlock() }
			r.fake.SetResponder(memorytest.Believing(r.scribe, func() string { mu.Lock(); defer mu.Unlock(); return belief }))
			ctx := context.Background()
			for _, ch := range []string{"vault", "hall"} {
				if err := r.p.Bind(ctx, guildRef(ch, ""), "lantern-keeper"); err != nil {
					t.Fatal(err)
				}
			}

			// The vault channel: Ada tells Maren the code; Maren comes to
			// believe it.
			for i := 1; i <= 4; i++ {
				r.guildSay(t, "vault", i, "Ada", fmt.Sprintf("Beat %d: the vault code is seven-four-one, keep it.", i))
			}
			vault := r.guildChat(t, "vault")
			believe("The vault opens with seven-four-one.")
			r.recordAndReflect(t, vault.ID)

			// The hall: Bob and Ada play in public; Maren forms a belief
			// from these lines alone.
			for i := 1; i <= 4; i++ {
				r.guildSay(t, "hall", i, []string{"Ada", "Bob"}[i%2], fmt.Sprintf("Beat %d: I shiver by the door and ask for a lamp.", i))
			}
			hall := r.guildChat(t, "hall")
			if hall.SpaceID != vault.SpaceID {
				t.Fatalf("the two channels of one guild are in spaces %s and %s", hall.SpaceID, vault.SpaceID)
			}
			believe("The visitor in the hall fears the dark.")
			r.recordAndReflect(t, hall.ID)

			// Both channels go on; a belief formed from both rests partly
			// on the vault.
			for i := 5; i <= 6; i++ {
				r.guildSay(t, "vault", i, "Ada", fmt.Sprintf("Beat %d: the code again, seven-four-one.", i))
				r.guildSay(t, "hall", i, "Bob", fmt.Sprintf("Beat %d: I hold the lamp high.", i))
			}
			for _, id := range []string{vault.ID, hall.ID} {
				if _, err := r.mem.Record(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			believe("The hall door answers to the vault's numbers.")
			if _, err := r.mem.Reflect(ctx, hall.ID, true); err != nil {
				t.Fatal(err)
			}
			bs, err := r.st.Beliefs(ctx, hall.SpaceID, "")
			if err != nil || len(bs) != 3 {
				t.Fatalf("beliefs = %+v, %v; want three (vault, hall, both)", bs, err)
			}

			// A resident summary longer than a turn injects, and a failing
			// job whose reason holds a key.
			para := func(tag string, n int) string { return tag + " " + strings.Repeat("lamp oil and salt. ", n) }
			resident := para("FIRST-PART", 30) + "\n\n" + para("SECOND-PART", 25) + "\n\n" + para("CUT-TAIL", 30)
			if err := r.st.EditMemory(ctx, "lantern-keeper", hall.SpaceID, nil, &resident, "test"); err != nil {
				t.Fatal(err)
			}
			fail := models.JobRecord{Kind: "compact", Key: hall.ID, Outcome: models.OutcomeFailed, Failures: 2,
				Reason: "scribe: POST https://llm.example/v1?api_key=sk-LEAKED: 401", UpdatedAt: time.Now()}
			if err := r.st.DB().Create(&fail).Error; err != nil {
				t.Fatal(err)
			}

			bob := bot.Inbound{Channel: guildRef("hall", ""), AuthorID: "bob", AuthorName: "Bob"}
			sink := &confidingSink{}
			if err := r.p.Exec(ctx, bob, bot.Command{Name: "memory"}, sink); err != nil {
				t.Fatal(err)
			}
			if len(sink.notices) != 0 || len(sink.confided) != 1 {
				t.Errorf("/memory showed the channel %d notices and Bob alone %d; want one answer to Bob alone", len(sink.notices), len(sink.confided))
			}
			got := strings.Join(append(sink.notices, sink.confided...), "\n")
			if !strings.Contains(got, "fears the dark") || !strings.Contains(got, "Beliefs (1):") {
				t.Errorf("Bob is not shown the belief formed in the hall:\n%s", got)
			}
			for _, leak := range []string{"seven-four-one", "vault's numbers", "Ledger", `"place"`, "sk-LEAKED", "llm.example", "CUT-TAIL", vault.ID} {
				if strings.Contains(got, leak) {
					t.Errorf("Bob is shown %q:\n%s", leak, got)
				}
			}
			for _, want := range []string{"FIRST-PART", "SECOND-PART", "(… the rest is omitted for length)", "Owed, failing: compaction", "Record of this chat:"} {
				if !strings.Contains(got, want) {
					t.Errorf("Bob's answer lacks %q:\n%s", want, got)
				}
			}

			// A platform that cannot answer him alone: a refusal, nothing
			// of the memory.
			plain := &discardSink{}
			if err := r.p.Exec(ctx, bob, bot.Command{Name: "memory"}, plain); err != nil {
				t.Fatal(err)
			}
			if out := strings.Join(plain.notices, "\n"); !strings.Contains(out, "direct message") || strings.Contains(out, "fears the dark") || strings.Contains(out, "FIRST-PART") {
				t.Errorf("without a private answer /memory said %q", out)
			}
		})
	}
}

// TestMemoryInAGroupLeavesOutWhatWasWhispered: in a guild channel Maren
// forms a belief from public lines (the control), then one that also rests
// on lines Ada whispered to her and her answers. Bob's /memory holds the
// first and not the second: a whisper stays with the two who were there.
func TestMemoryInAGroupLeavesOutWhatWasWhispered(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			r := newRecordRig(t, b, 100)
			var mu sync.Mutex
			belief := ""
			believe := func(s string) { mu.Lock(); belief = s; mu.Unlock() }
			r.fake.SetResponder(memorytest.Believing(r.scribe, func() string { mu.Lock(); defer mu.Unlock(); return belief }))
			ctx := context.Background()
			if err := r.p.Bind(ctx, guildRef("hall", ""), "lantern-keeper"); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 4; i++ {
				r.guildSay(t, "hall", i, "Ada", fmt.Sprintf("Beat %d: I shiver by the door and ask for a lamp.", i))
			}
			hall := r.guildChat(t, "hall")
			believe("The visitor in the hall fears the dark.")
			r.recordAndReflect(t, hall.ID)

			ada := bot.Inbound{Channel: guildRef("hall", ""), AuthorID: "ada", AuthorName: "Ada"}
			for i := 1; i <= 3; i++ {
				ws := &confidingSink{}
				if err := r.p.Exec(ctx, ada, bot.Command{Name: "whisper", Args: fmt.Sprintf("Maren the key is under the mat (%d)", i)}, ws); err != nil {
					t.Fatal(err)
				}
			}
			r.guildSay(t, "hall", 5, "Ada", "Beat 5: I hold the lamp high.")
			var whispered int64
			if err := r.st.DB().Model(&models.Message{}).Where("chat_id = ? AND whisper_to = ?", hall.ID, "Maren").Count(&whispered).Error; err != nil || whispered != 3 {
				t.Fatalf("%d whispered lines stored (%v), want 3", whispered, err)
			}
			believe("Ada hid the key under the mat.")
			r.recordAndReflect(t, hall.ID)
			bs, err := r.st.Beliefs(ctx, hall.SpaceID, "")
			if err != nil || len(bs) != 2 {
				t.Fatalf("beliefs = %+v, %v; want the public one and the whispered one", bs, err)
			}

			sink := &confidingSink{}
			bob := bot.Inbound{Channel: guildRef("hall", ""), AuthorID: "bob", AuthorName: "Bob"}
			if err := r.p.Exec(ctx, bob, bot.Command{Name: "memory"}, sink); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(append(sink.notices, sink.confided...), "\n")
			if !strings.Contains(got, "fears the dark") {
				t.Errorf("Bob is not shown the belief formed in public:\n%s", got)
			}
			if strings.Contains(got, "under the mat") {
				t.Errorf("Bob is shown the belief resting on Ada's whisper:\n%s", got)
			}
		})
	}
}
