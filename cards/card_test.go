package cards_test

import (
	"errors"
	"strings"
	"testing"

	"troupe/cards"
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
			c, err := cards.ParseCard([]byte(tt.json))
			if tt.wantErr != "" {
				if !errors.Is(err, cards.ErrCardInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got %v, want ErrCardInvalid with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || c.Name != tt.wantName || c.Language != tt.wantLang {
				t.Errorf("got %+v, %v; want name %s lang %s", c, err, tt.wantName, tt.wantLang)
			}
		})
	}
	c, _ := cards.ParseCard([]byte(tests[0].json))
	if got := c.Greeting("Ada"); got != "Hi Ada, I am Maren." {
		t.Errorf("greeting = %q", got)
	}
}

func TestExampleCardsLoad(t *testing.T) {
	t.Parallel()
	lib, err := cards.LoadLibrary("../examples/cards", "")
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
