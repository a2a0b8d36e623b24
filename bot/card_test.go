package bot_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/llm/openaitest"
)

func TestParseCard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, wantErr, wantName, wantLang string
	}{
		{"v2", `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Maren","first_mes":"Hi {{user}}, I am {{char}}."}}`, "", "Maren", "en"},
		{"v1 flat", `{"name":"苏砚","description":"茶馆老板娘，说话轻声细语。","first_mes":"客官请坐。"}`, "", "苏砚", "zh"},
		{"explicit language", `{"spec":"chara_card_v2","data":{"name":"X","extensions":{"troupe":{"language":"zh"}}}}`, "", "X", "zh"},
		{"bad language", `{"spec":"chara_card_v2","data":{"name":"X","extensions":{"troupe":{"language":"fr"}}}}`, "not zh or en", "", ""},
		{"no name", `{"spec":"chara_card_v2","data":{"description":"x"}}`, "name is empty", "", ""},
		{"not json", `{"spec":`, "not JSON", "", ""},
		{"unknown spec", `{"spec":"something_else","data":{"name":"X"}}`, "unknown spec", "", ""},
		{"spec without data", `{"spec":"chara_card_v2"}`, "without data", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := bot.ParseCard([]byte(tt.json))
			if tt.wantErr != "" {
				if !errors.Is(err, bot.ErrCardInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got %v, want ErrCardInvalid with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || c.Name != tt.wantName || c.Language != tt.wantLang {
				t.Errorf("got %+v, %v; want name %s lang %s", c, err, tt.wantName, tt.wantLang)
			}
		})
	}
	c, _ := bot.ParseCard([]byte(tests[0].json))
	if got := c.Greeting("Ada"); got != "Hi Ada, I am Maren." {
		t.Errorf("greeting = %q", got)
	}
}

func TestExampleCardsLoad(t *testing.T) {
	t.Parallel()
	lib, err := bot.LoadLibrary("../examples/cards", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(lib.List()) != 2 {
		t.Fatalf("example cards = %d, want 2", len(lib.List()))
	}
	if _, ok := lib.Default(); ok {
		t.Errorf("two cards and no default: there should be no default")
	}
	for _, key := range []string{"Maren", "MAREN", "lantern-keeper", "苏砚", "Tea-House"} {
		if _, ok := lib.Find(key); !ok {
			t.Errorf("Find(%q) failed", key)
		}
	}
}

func TestCreatorNotesNeverSent(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	must(t, r.p.Handle(context.Background(), inbound("notes", 1), &discardSink{}))
	last, _ := r.fake.Last()
	for _, m := range last.Messages {
		if strings.Contains(m.Content, "An example card shipped with troupe") {
			t.Fatal("creator_notes reached the model")
		}
	}
	if !strings.Contains(last.Messages[0].Content, "Gull Rock") {
		t.Errorf("the card's description is missing from the system message")
	}
}

func TestCompactCommandAnswers(t *testing.T) {
	r := newBenchRig(t, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	ctx := context.Background()
	must(t, r.p.Handle(ctx, inbound("c", 1), &discardSink{}))
	s := &discardSink{}
	must(t, r.p.Exec(ctx, inbound("c", 0), bot.Command{Name: "compact"}, s))
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "nothing old enough to compact") {
		t.Errorf("few beats: %v", s.notices)
	}
	for i := 2; i <= 12; i++ {
		must(t, r.p.Handle(ctx, inbound("c", i), &discardSink{}))
	}
	s = &discardSink{}
	must(t, r.p.Exec(ctx, inbound("c", 0), bot.Command{Name: "compact"}, s))
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "Compacted") {
		t.Errorf("12 beats: %v", s.notices)
	}
	// While a reply is being written, /compact says so.
	r.fake.Script(openaitest.Answer{Text: "A slow reply.", Latency: 500 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- r.p.Handle(ctx, inbound("c", 13), &discardSink{}) }()
	time.Sleep(150 * time.Millisecond)
	s = &discardSink{}
	must(t, r.p.Exec(ctx, inbound("c", 0), bot.Command{Name: "compact"}, s))
	if len(s.notices) != 1 || !strings.Contains(s.notices[0], "A reply is being written") {
		t.Errorf("during a reply: %v", s.notices)
	}
	must(t, <-done)
}
