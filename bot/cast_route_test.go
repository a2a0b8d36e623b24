package bot

import (
	"slices"
	"testing"

	"troupe/models"
)

func TestRouteTurn(t *testing.T) {
	t.Parallel()
	cast := []routeMember{{Name: "Mara"}, {Name: "Elias"}, {Name: "Mara (2)"}, {Name: "林小雨"}, {Name: "Tess", Away: true}}
	tests := []struct {
		name      string
		platform  string
		text      string
		addressed []string
		last      string
		speakers  []string
		away      []string
		nudge     bool
	}{
		{"nobody named: the last speaker", PlatformConsole, "hello there", nil, "Elias", []string{"Elias"}, nil, false},
		{"nobody named, nobody spoke yet: the first", PlatformConsole, "hello", nil, "", []string{"Mara"}, nil, false},
		{"last speaker away: the first", PlatformConsole, "hello", nil, "Tess", []string{"Mara"}, nil, false},
		{"console @mention", PlatformConsole, "what do you think, @elias?", nil, "Mara", []string{"Elias"}, nil, false},
		{"console name and comma at the start", PlatformConsole, "Elias, open the gate", nil, "Mara", []string{"Elias"}, nil, false},
		{"console full-width colon", PlatformConsole, "Elias：开门", nil, "Mara", []string{"Elias"}, nil, false},
		{"console name mid-text is plain text", PlatformConsole, "I saw Elias at the gate", nil, "Mara", []string{"Mara"}, nil, false},
		{"telegram name without comma is plain text", PlatformTelegram, "Elias opens the gate", nil, "Mara", []string{"Mara"}, nil, false},
		{"discord name anywhere, by appearance", PlatformDiscord, "elias and MARA, look", nil, "", []string{"Elias", "Mara"}, nil, false},
		{"discord word-bounded", PlatformDiscord, "Maradona and Eliasson came", nil, "Elias", []string{"Elias"}, nil, false},
		{"discord twice is once", PlatformDiscord, "Mara? Mara!", nil, "Elias", []string{"Mara"}, nil, false},
		{"longer name wins", PlatformDiscord, "Mara (2), come here", nil, "Elias", []string{"Mara (2)"}, nil, false},
		{"CJK name as substring", PlatformDiscord, "我看见林小雨在门口", nil, "Mara", []string{"林小雨"}, nil, false},
		{"CJK @mention on telegram", PlatformTelegram, "你好@林小雨", nil, "Mara", []string{"林小雨"}, nil, false},
		{"platform address first", PlatformDiscord, "and Mara too", []string{"Elias"}, "", []string{"Elias", "Mara"}, nil, false},
		{"unknown address is nothing", PlatformDiscord, "hi", []string{"Bob"}, "Elias", []string{"Elias"}, nil, false},
		{"unknown name is plain text", PlatformTelegram, "@Bob hi", nil, "Elias", []string{"Elias"}, nil, false},
		{"mentions only: a nudge", PlatformTelegram, "@Mara @Elias", nil, "", []string{"Mara", "Elias"}, nil, true},
		{"discord mention only: a nudge", PlatformDiscord, " @Elias ", nil, "", []string{"Elias"}, nil, true},
		{"a platform address with no text: a nudge", PlatformDiscord, "", []string{"Mara"}, "", []string{"Mara"}, nil, true},
		{"unknown mention only is no nudge", PlatformTelegram, "@Bob", nil, "Mara", []string{"Mara"}, nil, false},
		{"away member does not answer", PlatformConsole, "@Tess where are you", nil, "Mara", nil, []string{"Tess"}, false},
		{"away skipped, others answer", PlatformConsole, "@Tess @Elias hi", nil, "Mara", []string{"Elias"}, []string{"Tess"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := routeTurn(tc.platform, []routeText{{Text: tc.text, Addressed: tc.addressed}}, cast, tc.last)
			if !slices.Equal(r.Speakers, tc.speakers) {
				t.Errorf("speakers = %q, want %q", r.Speakers, tc.speakers)
			}
			if !slices.Equal(r.Away, tc.away) {
				t.Errorf("away = %q, want %q", r.Away, tc.away)
			}
			if len(r.Nudge) != 1 || r.Nudge[0] != tc.nudge {
				t.Errorf("nudge = %v, want [%v]", r.Nudge, tc.nudge)
			}
		})
	}
}

// TestRouteTurnSeveralMessages: a turn of several messages routes by first
// appearance over all of them; each member answers once.
func TestRouteTurnSeveralMessages(t *testing.T) {
	t.Parallel()
	cast := []routeMember{{Name: "Mara"}, {Name: "Elias"}}
	r := routeTurn(PlatformTelegram, []routeText{{Text: "@Elias"}, {Text: "Mara, and you? @Elias"}}, cast, "")
	if want := []string{"Elias", "Mara"}; !slices.Equal(r.Speakers, want) {
		t.Errorf("speakers = %q, want %q", r.Speakers, want)
	}
	if want := []bool{true, false}; !slices.Equal(r.Nudge, want) {
		t.Errorf("nudges = %v, want %v", r.Nudge, want)
	}
	all := routeTurn(PlatformTelegram, []routeText{{Text: "hi"}}, []routeMember{{Name: "Mara", Away: true}}, "Mara")
	if len(all.Speakers) != 0 || !slices.Equal(all.Away, []string{"Mara"}) {
		t.Errorf("everyone away: %+v, want nobody answering and Mara away", all)
	}
}

// TestRouteByTheCardsName: a member that goes by its card's name with the
// card's id beside it ("Wren (wren-png)": another card of the space is
// Wren) answers to the card's name alone, in text, @-mentions, platform
// addresses and /whisper, as long as no other member of the chat does.
func TestRouteByTheCardsName(t *testing.T) {
	t.Parallel()
	wren := models.CastMember{CardID: "wren-png", Name: "Wren (wren-png)"}
	alone := []models.CastMember{{CardID: "mara", Name: "Mara"}, wren}
	if got := displayName(wren, alone); got != "Wren" {
		t.Errorf("display name beside Mara: %q, want Wren", got)
	}
	if got := displayName(wren, append(alone, models.CastMember{CardID: "wren-json", Name: "Wren"})); got != "" {
		t.Errorf("display name beside the other Wren: %q, want none", got)
	}
	if got := displayName(models.CastMember{CardID: "mara", Name: "Mara"}, alone); got != "" {
		t.Errorf("display name of a member going by its card's name: %q, want none", got)
	}
	cast := []routeMember{{Name: "Mara"}, {Name: "Wren (wren-png)", Also: "Wren"}}
	for _, tc := range []struct {
		platform, text string
		addressed      []string
		want           string
	}{
		{PlatformTelegram, "Wren, open the lock", nil, "Wren (wren-png)"},
		{PlatformConsole, "what now, @wren?", nil, "Wren (wren-png)"},
		{PlatformDiscord, "I ask WREN about the key", nil, "Wren (wren-png)"},
		{PlatformDiscord, "Wren (wren-png), the key", nil, "Wren (wren-png)"},
		{PlatformDiscord, "a reply", []string{"Wren"}, "Wren (wren-png)"},
		{PlatformDiscord, "Wrenfield is far", nil, "Mara"},
	} {
		r := routeTurn(tc.platform, []routeText{{Text: tc.text, Addressed: tc.addressed}}, cast, "Mara")
		if !slices.Equal(r.Speakers, []string{tc.want}) {
			t.Errorf("%s %q: speakers %q, want %q", tc.platform, tc.text, r.Speakers, tc.want)
		}
	}
	m, text, ok := splitWhisper("wren: the key is under the step", cast)
	if !ok || m.Name != "Wren (wren-png)" || text != "the key is under the step" {
		t.Errorf("/whisper wren: %q %q %v", m.Name, text, ok)
	}
}
