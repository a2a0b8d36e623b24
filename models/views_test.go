package models_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"troupe/models"
)

// scene is a two-member chat (Maren, Elias) for view tests, with helpers
// that store beats with presence.
type scene struct {
	t    *testing.T
	st   *models.Store
	chat models.Chat
	head string
}

func newScene(t *testing.T, st *models.Store, channel string) *scene {
	t.Helper()
	chat := newChat(t, st, channel)
	if _, err := st.AddCast(context.Background(), chat.ID, "elias", "Elias", 8); err != nil {
		t.Fatal(err)
	}
	return &scene{t: t, st: st, chat: chat, head: chat.HeadID}
}

// beat stores a user line and Maren's reply, perceived by present (the
// players and cast members there).
func (s *scene) beat(text string, present ...string) (user, reply string) {
	s.t.Helper()
	ctx := context.Background()
	add := func(role, speaker, content string) string {
		m := &models.Message{Role: role, Content: content, SpeakerCardID: speaker}
		rec := &models.TurnRecord{SpaceID: s.chat.SpaceID, Present: present, Cast: []string{"Maren", "Elias"}}
		must(s.t, s.st.AppendTurn(ctx, s.chat.ID, s.head, s.head, []*models.Message{m}, rec))
		s.head = m.ID
		return m.ID
	}
	return add("user", "", text), add("assistant", "maren", "reply to "+text)
}

func contents(msgs []models.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

// TestLoadViewKeepsWhatEachPerceived: each member's view holds only the
// messages it perceived, its own summary only, and a member that missed
// the cut range walks from the carried cursor.
func TestLoadViewKeepsWhatEachPerceived(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		s := newScene(t, st, "console:views")
		s.beat("both one", "Maren", "Elias", "Ada")
		_, secret := s.beat("secret", "Maren", "Ada")
		s.beat("both two", "Maren", "Elias", "Ada")

		elias, err := st.LoadView(ctx, s.head, "Elias")
		must(t, err)
		// Elias joined after the greeting: he did not perceive it.
		want := []string{"both one", "reply to both one", "both two", "reply to both two"}
		if got := contents(elias.Uncovered); !slices.Equal(got, want) {
			t.Fatalf("Elias's view = %q, want %q", got, want)
		}
		maren, err := st.LoadView(ctx, s.head, "Maren")
		must(t, err)
		if len(maren.Uncovered) != 7 || len(maren.Walk) != 7 || len(elias.Walk) != 7 {
			t.Fatalf("Maren's view has %d messages (walk %d), Elias's walk %d; want 7, 7, 7", len(maren.Uncovered), len(maren.Walk), len(elias.Walk))
		}

		// One compaction at the secret's reply: Maren's summary is her own,
		// Elias gets his own row.
		sums, err := st.InstallViews(ctx, s.chat.ID, secret, []models.ViewSummary{
			{Members: []string{"Maren"}, Content: "Maren knows the secret"},
			{Members: []string{"Elias"}, Content: "Elias saw both one"},
		})
		must(t, err)
		if len(sums) != 2 {
			t.Fatalf("installed %d summaries, want 2", len(sums))
		}
		for who, wantSum := range map[string]string{"Maren": "Maren knows the secret", "Elias": "Elias saw both one"} {
			br, err := st.LoadView(ctx, s.head, who)
			must(t, err)
			if br.Summary == nil || br.Summary.Content != wantSum {
				t.Errorf("%s's summary = %+v, want %q", who, br.Summary, wantSum)
			}
			if got := contents(br.Uncovered); !slices.Equal(got, []string{"both two", "reply to both two"}) {
				t.Errorf("%s's uncovered = %q", who, got)
			}
		}
		// The whole chat still walks to the newest summary of anyone.
		whole, err := st.LoadBranch(ctx, s.head)
		must(t, err)
		if whole.Summary == nil || len(whole.Uncovered) != 2 {
			t.Errorf("whole-chat branch: summary %v, %d uncovered; want a summary and 2", whole.Summary, len(whole.Uncovered))
		}
		// A stale install (Elias's summary is no longer none) writes nothing.
		_, err = st.InstallViews(ctx, s.chat.ID, s.head, []models.ViewSummary{{Members: []string{"Elias"}, Content: "x"}})
		if !errors.Is(err, models.ErrStale) {
			t.Errorf("install over a moved view: err = %v, want ErrStale", err)
		}
	})
}

// TestLoadViewMemberlessSummary: a summary without member rows (a one-card
// chat's) belongs to whoever perceived its last message, so a member who
// joined later is not given what came before it.
func TestLoadViewMemberlessSummary(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:memberless")
		u, r := appendBeat(t, st, chat.ID, 1)
		_ = u
		// Presence of the one-card chat: Maren alone.
		must(t, st.DB().Create(&models.Presence{MessageID: r.ID, Character: "Maren", ChatID: chat.ID, SpaceID: chat.SpaceID, Perceived: true}).Error)
		if _, err := st.InstallSummary(ctx, chat.ID, "", r.ID, "before Elias", 1); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddCast(ctx, chat.ID, "elias", "Elias", 8); err != nil {
			t.Fatal(err)
		}
		maren, err := st.LoadView(ctx, r.ID, "Maren")
		must(t, err)
		if maren.Summary == nil || maren.Summary.Content != "before Elias" {
			t.Errorf("Maren's summary = %+v, want the one-card summary", maren.Summary)
		}
		elias, err := st.LoadView(ctx, r.ID, "Elias")
		must(t, err)
		if elias.Summary != nil {
			t.Errorf("Elias, who joined later, got the summary %q", elias.Summary.Content)
		}
	})
}

// TestLoadViewCostAfterAway: a member back after N messages it missed
// walks the same number of rows whatever N, once a compaction carried its
// cursor past them (the O(uncovered) promise, counted in rows walked).
func TestLoadViewCostAfterAway(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		walked := map[int]int{}
		for _, n := range []int{5, 80} {
			s := newScene(t, st, fmt.Sprintf("console:away%d", n))
			s.beat("before", "Maren", "Elias", "Ada")
			var last string
			for i := 0; i < n; i++ {
				_, last = s.beat(fmt.Sprintf("away %d", i), "Maren", "Ada")
			}
			base, err := st.LoadView(ctx, s.head, "Elias")
			must(t, err)
			if len(base.Walk) < 2*n {
				t.Fatalf("before the compaction Elias walks %d rows, want at least %d (the positive control)", len(base.Walk), 2*n)
			}
			_, err = st.InstallViews(ctx, s.chat.ID, last, []models.ViewSummary{
				{Members: []string{"Maren"}, Content: "all of it"},
				{Members: []string{"Elias"}, Content: ""},
			})
			must(t, err)
			s.beat("back", "Maren", "Elias", "Ada")
			s.beat("back again", "Maren", "Elias", "Ada")
			br, err := st.LoadView(ctx, s.head, "Elias")
			must(t, err)
			if got := contents(br.Uncovered); !slices.Equal(got, []string{"back", "reply to back", "back again", "reply to back again"}) {
				t.Fatalf("N=%d: Elias's view = %q", n, got)
			}
			walked[n] = len(br.Walk)
		}
		if walked[5] != walked[80] {
			t.Errorf("rows walked after 5 missed beats = %d, after 80 = %d; want equal", walked[5], walked[80])
		}
	})
}

// oldRecap is the recaps table before scenes: keyed by chat alone.
type oldRecap struct {
	ChatID      string `gorm:"primaryKey;size:26"`
	CardID      string `gorm:"size:64;not null;index:idx_recap_card_space"`
	SpaceID     string `gorm:"size:128;not null;index:idx_recap_card_space"`
	ChatName    string `gorm:"size:200"`
	Content     string `gorm:"type:text;not null"`
	Hash        string `gorm:"size:64;not null"`
	Fingerprint string `gorm:"size:64;not null"`
	UpdatedAt   time.Time
}

func (oldRecap) TableName() string { return "recaps" }

// TestRecapKeyMigration: a database with recaps keyed by chat migrates to
// (chat, card) keeping every recap as its card's, and then holds a second
// card's recap of the same chat.
func TestRecapKeyMigration(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		chat := newChat(t, st, "console:migrate")
		db := st.DB()
		must(t, db.Migrator().DropTable(&models.Recap{}))
		must(t, db.AutoMigrate(&oldRecap{}))
		old := oldRecap{ChatID: chat.ID, CardID: "maren", SpaceID: chat.SpaceID, ChatName: "test", Content: "# kept\nthe old recap", Hash: "h1", Fingerprint: "f1", UpdatedAt: time.Now()}
		must(t, db.Create(&old).Error)
		must(t, db.Create(&oldRecap{ChatID: "01OTHERCHAT", CardID: "tess", SpaceID: chat.SpaceID, Content: "other", Hash: "h2", Fingerprint: "f2"}).Error)

		must(t, st.Migrate(ctx))
		must(t, st.Migrate(ctx)) // a second run finds nothing to move

		got, err := st.CardRecap(ctx, chat.ID, "maren")
		must(t, err)
		if got.Content != old.Content || got.Hash != "h1" || got.Fingerprint != "f1" || got.SpaceID != chat.SpaceID {
			t.Errorf("migrated recap = %+v, want the old row", got)
		}
		if lead, err := st.Recap(ctx, chat.ID); err != nil || lead.Content != old.Content {
			t.Errorf("the chat's recap = %q, %v; want the old one", lead.Content, err)
		}
		if other, err := st.CardRecap(ctx, "01OTHERCHAT", "tess"); err != nil || other.Content != "other" {
			t.Errorf("the other chat's recap = %q, %v", other.Content, err)
		}
		if _, err := st.AddCast(ctx, chat.ID, "elias", "Elias", 8); err != nil {
			t.Fatal(err)
		}
		must(t, st.InstallRecap(ctx, models.Recap{ChatID: chat.ID, CardID: "elias", Content: "# his\nElias's own", Hash: "h3", Fingerprint: "f3"}))
		rs, err := st.ChatRecaps(ctx, chat.ID)
		must(t, err)
		if len(rs) != 2 || rs[0].CardID != "elias" || rs[1].Content != old.Content {
			t.Errorf("recaps of the chat = %+v, want Elias's and the kept one", rs)
		}
		err = st.InstallRecap(ctx, models.Recap{ChatID: chat.ID, CardID: "stranger", Content: "x", Hash: "h", Fingerprint: "f"})
		if !errors.Is(err, models.ErrNotInCast) {
			t.Errorf("a recap for a card not in the cast: err = %v, want ErrNotInCast", err)
		}
	})
}
