package telegram

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/bot"
)

func loadUpdate(t *testing.T, name string) tgbotapi.Update {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var u tgbotapi.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return u
}

func TestRoute(t *testing.T) {
	t.Parallel()
	self := tgbotapi.User{ID: 123456789, IsBot: true, FirstName: "Troupe", UserName: "troupe_test_bot"}
	dm := bot.ChannelRef{Platform: "telegram", ID: "1001", SpaceKind: bot.SpaceUser, SpaceID: "1001"}
	group := bot.ChannelRef{Platform: "telegram", ID: "-1001234567890", SpaceKind: bot.SpaceGroup, SpaceID: "-1001234567890", Group: true}
	tests := []struct {
		name    string
		file    string
		groups  bool
		allowed []string
		// want: the reason it is ignored, or the event.
		reason    string
		kind      eventKind
		text      string
		cmd       string
		channel   bot.ChannelRef
		replyTo   int
		lang      string
		canManage bool
	}{
		{name: "dm text", file: "update_private_text.json", kind: evText, text: "*pushes the door open* Is anyone here?", channel: dm, lang: "en", canManage: true},
		{name: "dm command", file: "update_private_command.json", kind: evCommand, cmd: "persona", text: "/persona Alice | a lost sailor", channel: dm, lang: "en", canManage: true},
		{name: "caption counts as text", file: "update_private_photo_caption.json", kind: evText, text: "这是我在灯塔下找到的东西。", channel: dm, lang: "zh", canManage: true},
		{name: "sticker", file: "update_private_sticker.json", reason: "no text"},
		{name: "edited", file: "update_edited.json", reason: "edited message"},
		{name: "channel post", file: "update_channel_post.json", reason: "unsupported update"},
		{name: "from a bot", file: "update_from_bot.json", reason: "from a bot"},
		{name: "groups off", file: "update_group_mention.json", reason: "groups are off"},
		{name: "group not addressed", file: "update_group_plain.json", groups: true, reason: "not addressed to the bot"},
		{name: "group mention", file: "update_group_mention.json", groups: true, kind: evText, text: "light the lamp, please", channel: group, replyTo: 502, lang: "en"},
		{name: "group reply to bot", file: "update_group_reply_to_bot.json", groups: true, kind: evText, text: "Just a traveller.", channel: group, replyTo: 504, lang: "en"},
		{name: "group command to another bot", file: "update_group_command_other_bot.json", groups: true, reason: "command for another bot"},
		{name: "group command to us", file: "update_group_command_ours.json", groups: true, kind: evCommand, cmd: "card", text: "/card@troupe_test_bot list", channel: group, replyTo: 506, lang: "en"},
		{name: "allowed by username", file: "update_private_text.json", allowed: []string{"@Alice"}, kind: evText, text: "*pushes the door open* Is anyone here?", channel: dm, lang: "en", canManage: true},
		{name: "allowed by id", file: "update_private_text.json", allowed: []string{"1001"}, kind: evText, text: "*pushes the door open* Is anyone here?", channel: dm, lang: "en", canManage: true},
		{name: "not allowed in dm gets a notice", file: "update_private_text.json", allowed: []string{"bob"}, kind: evNotice, text: "*pushes the door open* Is anyone here?", channel: dm, lang: "en", canManage: true},
		{name: "not allowed in group is ignored", file: "update_group_mention.json", groups: true, allowed: []string{"alice"}, reason: "user not allowed"},
		{name: "callback", file: "update_callback.json", kind: evCallback, channel: dm, lang: "en", canManage: true},
		{name: "photo without caption", file: "update_private_photo_sizes.json", kind: evText, text: "", channel: dm, lang: "en", canManage: true},
		{name: "voice note", file: "update_private_voice.json", kind: evText, text: "", channel: dm, lang: "en", canManage: true},
		{name: "file of no use", file: "update_private_document_pdf.json", reason: "no text"},
		{name: "group photo replying to the bot", file: "update_group_photo_reply_to_bot.json", groups: true, kind: evText, text: "", channel: group, replyTo: 510, lang: "en"},
		{name: "group photo not addressed", file: "update_group_photo_plain.json", groups: true, reason: "not addressed to the bot"},
		{name: "voice command", file: "update_private_voice_command.json", kind: evCommand, cmd: "voice", text: "/voice on", channel: dm, lang: "en", canManage: true},
		{name: "picture command in a caption", file: "update_private_photo_command.json", kind: evCommand, cmd: "picture", text: "/picture a lantern like this", channel: dm, lang: "en", canManage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := router{self: self, allowGroups: tt.groups, allowed: newAllowList(tt.allowed)}
			ev, why := r.route(loadUpdate(t, tt.file))
			if why != tt.reason {
				t.Fatalf("reason: got %q, want %q", why, tt.reason)
			}
			if why != "" {
				return
			}
			if ev.kind != tt.kind {
				t.Errorf("kind: got %d, want %d", ev.kind, tt.kind)
			}
			if tt.kind != evCallback && tt.kind != evNotice && ev.in.Text != tt.text {
				t.Errorf("text: got %q, want %q", ev.in.Text, tt.text)
			}
			if ev.cmd.Name != tt.cmd {
				t.Errorf("command: got %q, want %q", ev.cmd.Name, tt.cmd)
			}
			if ev.in.Channel != tt.channel {
				t.Errorf("channel: got %+v, want %+v", ev.in.Channel, tt.channel)
			}
			if ev.replyTo != tt.replyTo {
				t.Errorf("replyTo: got %d, want %d", ev.replyTo, tt.replyTo)
			}
			if ev.lang != tt.lang {
				t.Errorf("lang: got %q, want %q", ev.lang, tt.lang)
			}
			if ev.in.CanManage != tt.canManage {
				t.Errorf("CanManage: got %v, want %v", ev.in.CanManage, tt.canManage)
			}
			if tt.kind == evNotice && ev.notice == "" {
				t.Errorf("notice is empty")
			}
		})
	}
}

func TestRouteCallbackFields(t *testing.T) {
	t.Parallel()
	r := router{self: tgbotapi.User{ID: 123456789, UserName: "troupe_test_bot"}}
	ev, why := r.route(loadUpdate(t, "update_callback.json"))
	if why != "" {
		t.Fatal(why)
	}
	if ev.callbackID != "4382bfdwdsb323b2d9" || ev.data != "cf:y:0123456789abcdef01234567" || ev.msgID != 21 || ev.chatID != 1001 {
		t.Errorf("got id %q data %q message %d chat %d", ev.callbackID, ev.data, ev.msgID, ev.chatID)
	}
	if ev.in.AuthorID != "1001" || ev.in.AuthorName != "Alice" {
		t.Errorf("author: got %q %q", ev.in.AuthorID, ev.in.AuthorName)
	}
}

func TestInboundFields(t *testing.T) {
	t.Parallel()
	r := router{self: tgbotapi.User{ID: 123456789, UserName: "troupe_test_bot"}}
	ev, _ := r.route(loadUpdate(t, "update_private_text.json"))
	in := ev.in
	if in.AuthorID != "1001" || in.AuthorName != "Alice Liddell" || in.MessageID != "17" || in.Received.Unix() != 1735689600 {
		t.Errorf("got %+v", in)
	}
	if got, want := in.Channel.Key(), "telegram:1001"; got != want {
		t.Errorf("channel key: got %q, want %q", got, want)
	}
	if got, want := in.Channel.Space(), "telegram:user:1001"; got != want {
		t.Errorf("space: got %q, want %q", got, want)
	}
}

func TestStripMention(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"@troupe_test_bot hi", "hi"},
		{"hi @Troupe_Test_Bot!", "hi !"},
		{"@troupe_test_botty hi", "@troupe_test_botty hi"},
		{"mail me@troupe_test_bot.org", "mail me@troupe_test_bot.org"},
	}
	for _, tt := range tests {
		if got := stripMention(tt.in, "troupe_test_bot"); got != tt.want {
			t.Errorf("stripMention(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCallbackWhereTheBotDoesNotPlayIsAnswered: a button pressed in a group
// while groups are off is still answered (with a notice), so the client
// stops its spinner; it never reaches the pipeline.
func TestCallbackWhereTheBotDoesNotPlayIsAnswered(t *testing.T) {
	t.Parallel()
	r := router{self: tgbotapi.User{ID: 123456789, UserName: "troupe_test_bot"}}
	u := loadUpdate(t, "update_callback.json")
	u.CallbackQuery.Message.Chat.ID, u.CallbackQuery.Message.Chat.Type = -100777, "supergroup"
	ev, why := r.route(u)
	if why != "" {
		t.Fatalf("dropped (%s): the press would spin", why)
	}
	if ev.kind != evCallback || ev.callbackID != "4382bfdwdsb323b2d9" || !strings.Contains(ev.notice, "does not play in this chat") {
		t.Errorf("got kind %v callback %q notice %q", ev.kind, ev.callbackID, ev.notice)
	}
	if ev.in.Channel.ID != "" {
		t.Errorf("a refused press carries a channel: %+v", ev.in.Channel)
	}
}
