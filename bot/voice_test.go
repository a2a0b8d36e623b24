package bot_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/fakes/openaitest"
	"troupe/media"
)

// /voice on in a channel: a turn delivers its text reply, then the same
// reply spoken — a voice note whose audio says the reply without its
// Markdown marks — in the card's own voice (extensions.troupe.voice, over
// extensions.voice). /voice off: the next reply is text only.
func TestVoiceOnSpeaksTheReplyAfterItsText(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newOutRig(t, b.dsn, true, false, withVoices("shimmer", "echo"))
			ada := inbound("voice", 1)
			if got := noticeText(execIn(t, r.p, ada, "voice", "")); !strings.Contains(got, "Voice is off") {
				t.Errorf("/voice before any: %q, want it to say voice is off", got)
			}
			if got := noticeText(execIn(t, r.p, ada, "voice", "on")); !strings.Contains(got, "Voice is on") {
				t.Fatalf("/voice on: %q", got)
			}
			if got := noticeText(execIn(t, r.p, ada, "voice", "")); !strings.Contains(got, "Voice is on") {
				t.Errorf("/voice after on: %q, want it to say voice is on", got)
			}

			r.fake.Script(openaitest.Answer{Text: "*She lifts the lamp.* The light is **yours** tonight, _friend_."})
			s := &fileSink{}
			must(t, handle(ctx, r.p, ada, s))
			files := s.waitFor(t, "file", 1)
			if got := s.kinds(); got != "reply,file" {
				t.Errorf("the sink got %s, want the reply and then its audio", got)
			}
			f := files[0].file
			const said = "She lifts the lamp. The light is yours tonight, friend."
			if f.Kind != media.Voice || f.Name != "reply.ogg" || f.MIME != "audio/ogg" {
				t.Errorf("the spoken reply is %s %s %s, want a voice note reply.ogg audio/ogg", f.Kind, f.Name, f.MIME)
			}
			if want := "OggS\x00\x02" + said; string(f.Data) != want {
				t.Errorf("the audio says %q, want %q", f.Data, want)
			}
			reqs := r.fake.RequestsTo(openaitest.SpeechPath)
			if len(reqs) != 1 || reqs[0].Voice != "shimmer" || reqs[0].Prompt != said || reqs[0].ResponseFormat != "opus" {
				t.Fatalf("speech requests = %+v, want one for %q in the card's voice shimmer, as opus", reqs, said)
			}
			if br := branchOf(t, r.st, "console:voice"); br[len(br)-1].Content != "*She lifts the lamp.* The light is **yours** tonight, _friend_." {
				t.Errorf("the stored reply is %q, want the text as written", br[len(br)-1].Content)
			}

			execIn(t, r.p, ada, "voice", "off")
			s = &fileSink{}
			must(t, handle(ctx, r.p, inbound("voice", 2), s))
			time.Sleep(200 * time.Millisecond)
			if got := s.kinds(); got != "reply" {
				t.Errorf("with voice off the sink got %s, want the reply alone", got)
			}
			if n := len(r.fake.RequestsTo(openaitest.SpeechPath)); n != 1 {
				t.Errorf("with voice off %d speech requests were made in all, want still 1", n)
			}
		})
	}
}

// A card that names no voice speaks with Options.Voice (tts.voice);
// extensions.voice serves when extensions.troupe.voice is not set.
func TestVoiceFallsBackToExtensionsThenConfig(t *testing.T) {
	tests := []struct {
		name, troupe, plain, want string
	}{
		{"extensions.voice", "", "echo", "echo"},
		{"config", "", "", "alloy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newOutRig(t, "sqlite://"+t.TempDir()+"/t.db", true, false, withVoices(tt.troupe, tt.plain))
			in := inbound("fallback", 1)
			execIn(t, r.p, in, "voice", "on")
			s := &fileSink{}
			must(t, handle(context.Background(), r.p, in, s))
			s.waitFor(t, "file", 1)
			if reqs := r.fake.RequestsTo(openaitest.SpeechPath); len(reqs) != 1 || reqs[0].Voice != tt.want {
				t.Errorf("speech requests = %+v, want one in voice %s", reqs, tt.want)
			}
		})
	}
}

// In a group channel only a manager turns voice on or off: anyone else is
// refused (to them alone where the platform can) and nothing changes.
// Without a speech endpoint /voice on says none is configured and stores
// nothing.
func TestVoiceRightsAndNoEndpoint(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newOutRig(t, b.dsn, true, false, nil)
			group := bot.ChannelRef{Platform: "discord", ID: "c1", SpaceKind: bot.SpaceGuild, SpaceID: "g1", Group: true}
			member := bot.Inbound{Channel: group, AuthorID: "u1", AuthorName: "Ada", Text: "Hello", MessageID: "m1"}
			// A guild channel plays once a card is bound to it.
			must(t, r.p.Bind(ctx, group, "lantern-keeper"))
			must(t, handle(ctx, r.p, member, &fileSink{}))
			s := execIn(t, r.p, member, "voice", "on")
			if ref := s.of("refusal"); len(ref) != 1 || !strings.Contains(ref[0].text, "manage") {
				t.Errorf("a member's /voice on got %+v, want one refusal", s.all())
			}
			if on, err := r.st.ChannelVoice(ctx, group.Key()); err != nil || on {
				t.Errorf("after a member's /voice on the voice is %v (%v), want off", on, err)
			}
			gm := member
			gm.AuthorID, gm.CanManage = "u2", true
			execIn(t, r.p, gm, "voice", "on")
			if on, _ := r.st.ChannelVoice(ctx, group.Key()); !on {
				t.Fatal("a manager's /voice on left the voice off")
			}
			s = execIn(t, r.p, member, "voice", "off")
			if len(s.of("refusal")) != 1 {
				t.Errorf("a member's /voice off got %+v, want a refusal", s.all())
			}
			if on, _ := r.st.ChannelVoice(ctx, group.Key()); !on {
				t.Error("a member's /voice off turned the voice off")
			}

			silent := newOutRig(t, b.dsn, false, false, nil)
			gm.Channel.ID = "c2"
			s = execIn(t, silent.p, gm, "voice", "on")
			if got := noticeText(s); !strings.Contains(got, "No speech endpoint is configured") {
				t.Errorf("/voice on without tts: %q", got)
			}
			if on, _ := silent.st.ChannelVoice(ctx, gm.Channel.Key()); on {
				t.Error("/voice on without tts stored the voice on")
			}
		})
	}
}

// A failing speech endpoint costs only the audio: the text reply is
// delivered and stored, one short notice says the audio is missing, and no
// file is sent.
func TestSpeechFailureCostsOnlyTheAudio(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newOutRig(t, b.dsn, true, false, nil)
			in := inbound("fail", 1)
			execIn(t, r.p, in, "voice", "on")
			r.fake.ScriptMedia(openaitest.SpeechPath, openaitest.Answer{Fault: openaitest.Fault500})
			r.fake.Script(openaitest.Answer{Text: "The lamp gutters but holds."})
			s := &fileSink{}
			must(t, handle(ctx, r.p, in, s))
			notices := s.waitFor(t, "notice", 1)
			time.Sleep(100 * time.Millisecond)
			if got := s.kinds(); got != "reply,notice" {
				t.Errorf("the sink got %s, want the reply and one notice", got)
			}
			if !strings.Contains(notices[0].text, "could not be made") || !strings.Contains(notices[0].text, "unavailable") {
				t.Errorf("the notice is %q, want it to say the audio failed and why", notices[0].text)
			}
			if br := branchOf(t, r.st, "console:fail"); br[len(br)-1].Content != "The lamp gutters but holds." {
				t.Errorf("the stored head is %q, want the reply", br[len(br)-1].Content)
			}
			// The next reply is spoken again.
			s = &fileSink{}
			must(t, handle(ctx, r.p, inbound("fail", 2), s))
			s.waitFor(t, "file", 1)
		})
	}
}

// Two quick turns with a slow speech endpoint (the first reply's audio
// takes longer than the second's): both text replies come without waiting
// for any audio, and the audio comes in reply order.
func TestSpokenRepliesKeepTheirOrder(t *testing.T) {
	ctx := context.Background()
	r := newOutRig(t, "sqlite://"+t.TempDir()+"/t.db", true, false, nil)
	in := inbound("order", 1)
	execIn(t, r.p, in, "voice", "on")
	r.fake.ScriptMedia(openaitest.SpeechPath, openaitest.Answer{Latency: 1500 * time.Millisecond}, openaitest.Answer{})
	r.fake.Script(openaitest.Answer{Text: "First, the stair."}, openaitest.Answer{Text: "Second, the lamp."})
	s := &fileSink{}
	must(t, handle(ctx, r.p, in, s))
	must(t, handle(ctx, r.p, inbound("order", 2), s))
	if got := s.kinds(); got != "reply,reply" {
		t.Errorf("after both turns the sink holds %s, want both replies and no audio yet", got)
	}
	files := s.waitFor(t, "file", 2)
	for i, want := range []string{"First, the stair.", "Second, the lamp."} {
		if !bytes.HasSuffix(files[i].file.Data, []byte(want)) {
			t.Errorf("audio %d says %q, want %q", i+1, files[i].file.Data, want)
		}
	}
}

// In a scene each reply is spoken in its own speaker's voice, and the audio
// of a beat's replies follows them in their order.
func TestSceneRepliesSpeakInTheirSpeakersVoices(t *testing.T) {
	ctx := context.Background()
	var cs []cards.Card
	for _, f := range []struct{ file, troupe, plain string }{{"lantern-keeper", "shimmer", ""}, {"tea-house", "", "fable"}} {
		c, err := cards.LoadCard("../examples/cards/" + f.file + ".json")
		if err != nil {
			t.Fatal(err)
		}
		withVoices(f.troupe, f.plain)(&c)
		cs = append(cs, c)
	}
	r := newOutRigOf(t, "sqlite://"+t.TempDir()+"/t.db", true, false, cs...)
	in := inbound("scene", 1)
	must(t, r.p.BindCast(ctx, in.Channel, []string{"lantern-keeper", "tea-house"}))
	execIn(t, r.p, in, "voice", "on")
	in.Text = "@苏砚 @Maren what do you both know?"
	s := &fileSink{}
	must(t, handle(ctx, r.p, in, s))
	files := s.waitFor(t, "file", 2)
	if got := s.kinds(); got != "reply,reply,file,file" {
		t.Errorf("the sink got %s, want both replies, then their audio", got)
	}
	replies := s.of("reply")
	reqs := r.fake.RequestsTo(openaitest.SpeechPath)
	if len(reqs) != 2 || reqs[0].Voice != "fable" || reqs[1].Voice != "shimmer" {
		t.Fatalf("speech requests = %+v, want 苏砚's in fable, then Maren's in shimmer", reqs)
	}
	for i := range files {
		if !bytes.HasSuffix(files[i].file.Data, []byte(strings.ReplaceAll(replies[i].text, "*", ""))) {
			t.Errorf("audio %d says %q, want reply %d %q", i+1, files[i].file.Data, i+1, replies[i].text)
		}
	}
}
