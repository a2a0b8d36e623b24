package bot_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"troupe/bot"
	"troupe/config"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/media"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// A fact only a picture's caption holds is recalled 60 beats later: the
// picture was shown at beat 1, the character perceived the caption line as
// it perceives any event, compaction covered it with the scribe's lossy
// summaries (memorytest keeps no facts), and beat 62 asks about it. Beats
// 2–61 are written through the store as the pipeline writes them (as in
// TestRecallBringsBackBeatThreeAtBeatSixHundred); beats 1 and 62 are real
// turns.
func TestPictureCaptionRecalledSixtyBeatsLater(t *testing.T) {
	const word = "Halcyon"
	const caption = "a brass key with the word Halcyon engraved on its bow"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newMediaRigBatch(t, b, 1000, func(o *bot.Options) { o.Recall = config.Default().Recall })
			r.fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
				a := r.scribe.Respond(req)
				if memorytest.Kind(req) == "record" {
					a.Text = threeEvenings(t, a.Text)
				}
				return a
			})
			r.fake.SetCaption(func(img openaitest.Image) string {
				if img.Color == "yellow" {
					return caption
				}
				return openaitest.Describe(img)
			})
			r.host.put("find.png", openaitest.Picture("yellow", 96, 64))
			r.send(t, "well", 1, "Look what I fished out of the well.", r.host.item(media.Image, "find.png", "find.png"))
			chat := r.chat(t, "well")
			head := chat.HeadID
			for beat := 2; beat <= 61; beat++ {
				text := fmt.Sprintf(`"Beat %d: the tide turns and the gulls circle the pier."`, beat)
				u := &models.Message{Role: prompt.RoleUser, AuthorID: "ada", AuthorName: "Ada", Content: text}
				if err := r.st.AppendTurn(ctx, chat.ID, head, head, []*models.Message{u}, &models.TurnRecord{SpaceID: chat.SpaceID,
					NewTurn: true, Present: []string{"Maren", "Ada"}, Actors: []string{"Ada"},
					Events: [][]models.PlainEvent{{{Kind: "line", Text: text}}}}); err != nil {
					t.Fatalf("beat %d: %v", beat, err)
				}
				a := &models.Message{Role: prompt.RoleAssistant, AuthorName: "Maren", Content: fmt.Sprintf("*Maren nods (%d).*", beat)}
				if err := r.st.AppendTurn(ctx, chat.ID, u.ID, u.ID, []*models.Message{a}, &models.TurnRecord{SpaceID: chat.SpaceID,
					Present: []string{"Maren", "Ada"}, Actors: []string{"Maren"},
					Events: [][]models.PlainEvent{{{Kind: "action", Text: a.Content}}}}); err != nil {
					t.Fatalf("beat %d reply: %v", beat, err)
				}
				head = a.ID
				if beat%20 == 0 || beat == 61 {
					if _, err := r.mem.Record(ctx, chat.ID); err != nil {
						t.Fatalf("recording at beat %d: %v", beat, err)
					}
					compactAll(t, r.mem, chat.ID)
				}
			}
			var seen models.Perception
			if err := r.st.DB().Where("character_name = ? AND text LIKE ?", "Maren", "%"+word+"%").Take(&seen).Error; err != nil {
				t.Fatalf("Maren has no perception of the picture: %v", err)
			}

			r.send(t, "well", 62, "What word was engraved on the brass key I showed you?")
			if block := recallBlock(t, r.fake); !strings.Contains(block, word) {
				t.Fatalf("the picture is not recalled 60 beats later:\n%s", block)
			}
			for _, m := range lastTurn(t, r.fake).Messages {
				if m.Role == "user" && strings.Contains(m.Content, word) {
					t.Errorf("the caption was sent verbatim (or kept by the summary), not recalled: %.120q", m.Content)
				}
			}
		})
	}
}

// /forget leaves no caption, no transcript and no kept original: no row
// holds their words, no raw page of the SQLite file either, and the chat's
// folder is gone.
func TestForgetLeavesNoCaptionTranscriptOrFile(t *testing.T) {
	const seen, heard = "Quillfeather", "Marrowdusk"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			keep := media.Keep{Dir: t.TempDir()}
			r := newMediaRig(t, b, func(o *bot.Options) { o.Media.Keep = keep })
			r.mem.UseForgetFiles(keep.ForgetChat)
			r.fake.SetCaption(func(openaitest.Image) string { return "a scroll sealed with the crest of house " + seen })
			r.host.put("scroll.png", openaitest.Picture("purple", 64, 64))
			r.host.put("note.ogg", []byte("OggS\x00\x02 spoken: The password is "+heard+"."))
			r.send(t, "fg", 1, "Here, take these.", r.host.item(media.Image, "scroll.png", "scroll.png"), r.host.item(media.Voice, "note.ogg", "note.ogg"))
			r.send(t, "fg", 2, "*I wait by the door.*")
			chat := r.chat(t, "fg")
			files, err := keep.Files(chat.ID)
			if err != nil || len(files) != 2 {
				t.Fatalf("kept %q (%v), want the picture and the voice note", files, err)
			}
			path := strings.TrimPrefix(b.DSN, "sqlite://")
			for _, w := range []string{seen, heard} {
				if len(rowsHolding(t, r.st, w)) == 0 {
					t.Fatalf("no row holds %q before the forget: the test checks nothing", w)
				}
				if b.Name == "sqlite" && bytesInFiles(t, path, w) == 0 {
					t.Fatalf("%q is on no page before the forget: the test checks nothing", w)
				}
			}

			forgetConfirmed(t, r.p, r.st, "fg", chat.ID)

			for _, w := range []string{seen, heard} {
				if rows := rowsHolding(t, r.st, w); len(rows) != 0 {
					t.Errorf("after the forget %q is in %v", w, rows)
				}
				if b.Name == "sqlite" {
					for _, form := range []string{w, strings.ToLower(w)} {
						if n := bytesInFiles(t, path, form); n != 0 {
							t.Errorf("after the forget %q is on %d raw pages", form, n)
						}
					}
				}
			}
			if files, err := keep.Files(chat.ID); err != nil || len(files) != 0 {
				t.Errorf("after the forget the chat keeps %q (%v)", files, err)
			}
			if entries, _ := os.ReadDir(keep.Dir); len(entries) != 0 {
				t.Errorf("after the forget the media folder holds %d entries", len(entries))
			}
		})
	}
}

// photo is a w×h JPEG of noise, as hard to compress as a photograph.
func photo(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x + rng.IntN(64)), uint8(y + rng.IntN(64)), uint8(rng.IntN(256)), 255})
		}
	}
	var b bytes.Buffer
	_ = jpeg.Encode(&b, img, &jpeg.Options{Quality: 85})
	return b.Bytes()
}

// BenchmarkInboundMedia measures the latency a picture and a voice note add
// to a turn, with the fake's caption and transcription endpoints at a fixed
// 300 ms and its chat turns at 0, on SQLite; and the memory a picture holds
// while it waits for its turn (its downscaled data URL) and what preparing
// it allocates, from a 3000×2000 photograph (a 1280×960 one for a
// typical turn too).
func BenchmarkInboundMedia(b *testing.B) {
	const delay = 300 * time.Millisecond
	be := testenv.Backends(b)[0]
	r := newMediaRig(b, be, nil)
	r.opt.Recorder.Enabled = false
	r.p = bot.New(r.opt)
	r.scribe.Next = func(req openaitest.Request) openaitest.Answer {
		a := r.capt.respond(req)
		if isCaption(req) {
			a.Latency = delay
		}
		return a
	}
	r.fake.SetMediaDelay(openaitest.TranscriptionsPath, delay)
	big := photo(3000, 2000)
	r.host.put("photo.jpg", big)
	r.host.put("small.jpg", photo(1280, 960))
	r.host.put("note.ogg", []byte("OggS\x00\x02 spoken: I light the lamp."))
	kinds := []struct {
		name  string
		items func() []media.Item
	}{
		{"text", func() []media.Item { return nil }},
		{"image-1mp", func() []media.Item { return []media.Item{r.host.item(media.Image, "small.jpg", "small.jpg")} }},
		{"image-6mp", func() []media.Item { return []media.Item{r.host.item(media.Image, "photo.jpg", "photo.jpg")} }},
		{"voice", func() []media.Item { return []media.Item{r.host.item(media.Voice, "", "note.ogg")} }},
	}
	n := 0
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			ch := "bench-" + k.name
			var total time.Duration
			for b.Loop() {
				n++
				in := inbound(ch, n)
				in.Media = k.items()
				start := time.Now()
				if err := handle(context.Background(), r.p, in, &discardSink{}); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/turn")
		})
	}
	b.Run("image-held", func(b *testing.B) {
		b.ReportAllocs()
		var held int
		for b.Loop() {
			pic, err := media.PrepareImage(big, 1024)
			if err != nil {
				b.Fatal(err)
			}
			held = len(pic.DataURL())
		}
		b.ReportMetric(float64(len(big))/1024, "KiB-original")
		b.ReportMetric(float64(held)/1024, "KiB-held")
	})
}
