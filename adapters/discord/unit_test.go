package discord

import (
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/cards"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRebaseSendsRESTToTheConfiguredBase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base, in, want string
	}{
		{"http://127.0.0.1:8080/", "https://discord.com/api/v9/channels/1/messages", "http://127.0.0.1:8080/api/v10/channels/1/messages"},
		{"http://127.0.0.1:8080/", "https://discord.com/api/v9/gateway", "http://127.0.0.1:8080/api/v10/gateway/bot"},
		{"https://proxy.example/discord/", "https://discord.com/api/v9/webhooks/1/tok/messages/2?thread_id=3", "https://proxy.example/discord/api/v10/webhooks/1/tok/messages/2?thread_id=3"},
		{"http://127.0.0.1:8080", "https://discord.com/api/v9/channels/1/messages/2/reactions/%F0%9F%94%A5/@me", "http://127.0.0.1:8080/api/v10/channels/1/messages/2/reactions/%F0%9F%94%A5/@me"},
		{"http://127.0.0.1:8080/", "https://cdn.discordapp.com/avatars/1/a.png", "https://cdn.discordapp.com/avatars/1/a.png"},
	}
	for _, tt := range tests {
		var got string
		rb, err := newRebase(tt.base, roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got = r.URL.String()
			return &http.Response{StatusCode: 204, Body: http.NoBody}, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", tt.in, nil)
		if _, err := rb.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s under %s: got %s, want %s", tt.in, tt.base, got, tt.want)
		}
	}
	if _, err := newRebase("ftp://x/", nil); err == nil {
		t.Errorf("an ftp base was accepted")
	}
}

func TestCommandOf(t *testing.T) {
	t.Parallel()
	str := func(name, v string) *discordgo.ApplicationCommandInteractionDataOption {
		return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionString, Value: v}
	}
	sub := func(name string, opts ...*discordgo.ApplicationCommandInteractionDataOption) *discordgo.ApplicationCommandInteractionDataOption {
		return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionSubCommand, Options: opts}
	}
	tests := []struct {
		name string
		data discordgo.ApplicationCommandInteractionData
		want bot.Command
		pub  bool
	}{
		{"card set", discordgo.ApplicationCommandInteractionData{Name: "card", Options: []*discordgo.ApplicationCommandInteractionDataOption{sub("set", str("card", " Maren "))}}, bot.Command{Name: "card", Args: "set Maren"}, true},
		{"card list", discordgo.ApplicationCommandInteractionData{Name: "card", Options: []*discordgo.ApplicationCommandInteractionDataOption{sub("list")}}, bot.Command{Name: "card", Args: "list"}, false},
		{"card mention", discordgo.ApplicationCommandInteractionData{Name: "card", Options: []*discordgo.ApplicationCommandInteractionDataOption{sub("mention", str("mode", "off"))}}, bot.Command{Name: "card", Args: "mention off"}, false},
		{"forget a chat", discordgo.ApplicationCommandInteractionData{Name: "forget", Options: []*discordgo.ApplicationCommandInteractionDataOption{str("chat", "01ABC")}}, bot.Command{Name: "forget", Args: "01ABC"}, false},
		{"forget", discordgo.ApplicationCommandInteractionData{Name: "forget"}, bot.Command{Name: "forget"}, false},
		{"persona", discordgo.ApplicationCommandInteractionData{Name: "persona", Options: []*discordgo.ApplicationCommandInteractionDataOption{str("name", "Ada"), str("description", "curious")}}, bot.Command{Name: "persona", Args: "Ada | curious"}, false},
		{"persona name", discordgo.ApplicationCommandInteractionData{Name: "persona", Options: []*discordgo.ApplicationCommandInteractionDataOption{str("name", "Ada")}}, bot.Command{Name: "persona", Args: "Ada"}, false},
		{"memory action", discordgo.ApplicationCommandInteractionData{Name: "memory", Options: []*discordgo.ApplicationCommandInteractionDataOption{str("action", "delete-recap 01X")}}, bot.Command{Name: "memory", Args: "delete-recap 01X"}, false},
		{"new", discordgo.ApplicationCommandInteractionData{Name: "new"}, bot.Command{Name: "new"}, true},
		{"regen", discordgo.ApplicationCommandInteractionData{Name: "regen"}, bot.Command{Name: "regen"}, true},
		{"cast list", discordgo.ApplicationCommandInteractionData{Name: "cast", Options: []*discordgo.ApplicationCommandInteractionDataOption{sub("list")}}, bot.Command{Name: "cast", Args: "list"}, false},
		{"cast add", discordgo.ApplicationCommandInteractionData{Name: "cast", Options: []*discordgo.ApplicationCommandInteractionDataOption{sub("add", str("card", "tea-house"))}}, bot.Command{Name: "cast", Args: "add tea-house"}, true},
		{"cast away", discordgo.ApplicationCommandInteractionData{Name: "cast", Options: []*discordgo.ApplicationCommandInteractionDataOption{sub("away", str("name", " Mara (2) "))}}, bot.Command{Name: "cast", Args: "away Mara (2)"}, true},
		{"whisper", discordgo.ApplicationCommandInteractionData{Name: "whisper", Options: []*discordgo.ApplicationCommandInteractionDataOption{str("name", "Ilse"), str("text", " the key ")}}, bot.Command{Name: "whisper", Args: "Ilse the key"}, false},
		{"voice on", discordgo.ApplicationCommandInteractionData{Name: "voice", Options: []*discordgo.ApplicationCommandInteractionDataOption{str("state", "on")}}, bot.Command{Name: "voice", Args: "on"}, false},
		{"voice", discordgo.ApplicationCommandInteractionData{Name: "voice"}, bot.Command{Name: "voice"}, false},
		{"picture of", discordgo.ApplicationCommandInteractionData{Name: "picture", Options: []*discordgo.ApplicationCommandInteractionDataOption{str("what", " the lamp at dusk ")}}, bot.Command{Name: "picture", Args: "the lamp at dusk"}, true},
		{"picture", discordgo.ApplicationCommandInteractionData{Name: "picture"}, bot.Command{Name: "picture"}, true},
	}
	for _, tt := range tests {
		got := commandOf(tt.data)
		if got != tt.want || public(got) != tt.pub {
			t.Errorf("%s: got %+v (public %v), want %+v (public %v)", tt.name, got, public(got), tt.want, tt.pub)
		}
	}
}

func TestCardChoicesMatchNameOrIDInAnyCase(t *testing.T) {
	t.Parallel()
	lib, err := cards.NewLibrary([]cards.Card{{ID: "lantern-keeper", Name: "Maren"}, {ID: "tea-house", Name: "Old Wen"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		typed string
		want  []string
	}{
		{"", []string{"lantern-keeper", "tea-house"}},
		{"mAr", []string{"lantern-keeper"}},
		{"TEA", []string{"tea-house"}},
		{"wen", []string{"tea-house"}},
		{"nobody", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range cardChoices(lib, tt.typed) {
			got = append(got, c.Value.(string))
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("typed %q: got %v, want %v", tt.typed, got, tt.want)
		}
	}
}

func TestBoldNameReadsTheBotsSpeakerPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{speaker{name: "Ilse"}.prefix() + "The lake is calm.", "Ilse"},
		{speaker{name: "M*ra"}.prefix() + "hi", "M*ra"},
		{"**Ilse** says hi", ""},
		{"The lake is calm.", ""},
	}
	for _, tt := range tests {
		if got := boldName(tt.in); got != tt.want {
			t.Errorf("boldName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
