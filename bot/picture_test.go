package bot_test

import (
	"bytes"
	"context"
	"image"
	_ "image/png"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/media"
	"troupe/models"
	"troupe/prompt"
)

// /picture a brass astrolabe: the channel gets a PNG the character shows,
// drawn from a prompt with the card's appearance, the place of the
// recorder's ledger and what was asked; the next turn's prompt carries the
// picture's caption as an [image: …] line the character showed; /regen
// after a picture writes the last reply again, not the picture; /forget
// leaves the caption in no row and (SQLite) on no raw page.
func TestPictureShowsTheSceneAndJoinsTheStory(t *testing.T) {
	const what = "a brass astrolabe"
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			r := newOutRig(t, b.dsn, false, true, nil)
			in := inbound("pic", 1)
			must(t, handle(ctx, r.p, in, &fileSink{}))
			ch, err := r.st.Channel(ctx, "console:pic")
			if err != nil {
				t.Fatal(err)
			}
			chatID := ch.CurrentChatID
			ledger := `{"time":"day 2, dusk","place":"the lamp room","where":{"Maren":"the lamp room","Tess":"the lamp room","Olin":"the harbour"}}`
			must(t, r.st.DB().Save(&models.Ledger{ChatID: chatID, Snapshot: ledger}).Error)

			s := execIn(t, r.p, in, "picture", what)
			files := s.of("file")
			if len(files) != 1 {
				t.Fatalf("/picture: the sink got %+v, want one file", s.all())
			}
			f := files[0].file
			if f.Kind != media.Image || f.Name != "picture.png" || f.MIME != "image/png" {
				t.Errorf("the picture is %s %s %s, want an image picture.png image/png", f.Kind, f.Name, f.MIME)
			}
			if _, format, err := image.Decode(bytes.NewReader(f.Data)); err != nil || format != "png" {
				t.Errorf("the picture does not decode as a PNG: %s, %v", format, err)
			}
			if !strings.Contains(f.Caption, what) || !strings.Contains(f.Caption, "the lamp room") {
				t.Errorf("the caption is %q, want what was asked and the place", f.Caption)
			}
			reqs := r.fake.RequestsTo(openaitest.ImagesPath)
			if len(reqs) != 1 {
				t.Fatalf("%d image requests, want 1", len(reqs))
			}
			for _, want := range []string{"salt-grey hair", "the lamp room", "day 2, dusk", "Tess", what} {
				if !strings.Contains(reqs[0].Prompt, want) {
					t.Errorf("the image prompt lacks %q:\n%s", want, reqs[0].Prompt)
				}
			}
			if strings.Contains(reqs[0].Prompt, "Olin") {
				t.Errorf("the image prompt names Olin, whom the ledger puts elsewhere:\n%s", reqs[0].Prompt)
			}
			br := branchOf(t, r.st, "console:pic")
			head := br[len(br)-1]
			line := "[image: " + f.Caption + "]"
			if head.Role != prompt.RoleAssistant || head.Content != line || head.AuthorName != "Maren" {
				t.Fatalf("the chat's head is %s %q by %q, want the character's %q", head.Role, head.Content, head.AuthorName, line)
			}

			// The next turn's prompt holds the caption, as the character's.
			must(t, handle(ctx, r.p, inbound("pic", 2), &fileSink{}))
			var shown bool
			for _, m := range lastChatPrompt(t, r.fake) {
				if strings.Contains(m.Content, line) {
					shown = m.Role == "assistant"
				}
			}
			if !shown {
				t.Errorf("the next turn's prompt has no assistant line %q: %+v", line, lastChatPrompt(t, r.fake))
			}

			// /regen after a picture writes the last reply again beside
			// it: the picture is no reply.
			execIn(t, r.p, in, "picture", "")
			before := branchOf(t, r.st, "console:pic")
			reply := before[len(before)-2]
			if got := before[len(before)-1].Content; !strings.Contains(got, "[image: the scene") {
				t.Fatalf("the second picture's line is %q", got)
			}
			s = execIn(t, r.p, in, "regen", "")
			if len(s.of("reply")) != 1 {
				t.Fatalf("/regen after a picture: the sink got %+v, want a reply", s.all())
			}
			after := branchOf(t, r.st, "console:pic")
			regen := after[len(after)-1]
			if regen.Role != prompt.RoleAssistant || strings.HasPrefix(regen.Content, "[image:") || regen.ParentID != reply.ParentID || regen.ID == reply.ID {
				t.Errorf("after /regen the head is %+v, want a new reply beside %s (parent %s)", regen, reply.ID, reply.ParentID)
			}

			if rows := rowsHolding(t, r.st, "astrolabe"); len(rows) == 0 {
				t.Fatal("no row holds the caption before the forget: the test checks nothing")
			}
			forgetConfirmed(t, r.p, r.st, "pic", chatID)
			if rows := rowsHolding(t, r.st, "astrolabe"); len(rows) != 0 {
				t.Errorf("after the forget these rows hold the caption: %v", rows)
			}
			if path, ok := strings.CutPrefix(b.dsn, "sqlite://"); ok {
				if n := bytesInFiles(t, path, "astrolabe"); n != 0 {
					t.Errorf("after the forget the caption is on %d raw pages", n)
				}
			}
		})
	}
}

// Without an image endpoint /picture says none is configured and asks
// nothing; a failing endpoint costs the picture alone: one notice, no file,
// nothing kept.
func TestPictureWithoutOrFailingEndpoint(t *testing.T) {
	ctx := context.Background()
	dsn := "sqlite://" + t.TempDir() + "/t.db"
	none := newOutRig(t, dsn, false, false, nil)
	in := inbound("nopic", 1)
	must(t, handle(ctx, none.p, in, &fileSink{}))
	if got := noticeText(execIn(t, none.p, in, "picture", "the sea")); !strings.Contains(got, "No image endpoint is configured") {
		t.Errorf("/picture without an endpoint: %q", got)
	}

	r := newOutRig(t, dsn, false, true, nil)
	before := branchOf(t, r.st, "console:nopic")
	r.fake.ScriptMedia(openaitest.ImagesPath, openaitest.Answer{Fault: openaitest.Fault500})
	s := execIn(t, r.p, in, "picture", "the sea")
	if got := s.kinds(); got != "notice" || !strings.Contains(noticeText(s), "could not be made") {
		t.Errorf("a failing endpoint: the sink got %+v, want one notice", s.all())
	}
	if after := branchOf(t, r.st, "console:nopic"); len(after) != len(before) {
		t.Errorf("a failed picture changed the branch: %d messages, were %d", len(after), len(before))
	}
	// A sink that sends no files is told so.
	if got := noticeText(discardExec(t, r.p, in, "picture")); !strings.Contains(got, "cannot be shown") {
		t.Errorf("/picture on a sink without files: %q", got)
	}
}

// discardExec runs a command on a sink that sends no files.
func discardExec(t *testing.T, p *bot.Pipeline, in bot.Inbound, name string) *fileSink {
	t.Helper()
	d := &discardSink{}
	must(t, p.Exec(context.Background(), in, bot.Command{Name: name}, d))
	s := &fileSink{}
	for _, n := range d.notices {
		s.add(sinkEvent{kind: "notice", text: n})
	}
	return s
}
