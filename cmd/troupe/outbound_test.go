package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
)

// troupe chat with tts.* and image.* set (by TROUPE_ variables) wires the
// speech and image endpoints into the pipeline: /voice on has the next
// reply also spoken, in tts.voice, and /picture posts a picture; the
// console says each file came.
func TestChatWiresSpeechAndPictures(t *testing.T) {
	fake := openaitest.NewServer(t)
	vals := map[string]string{
		"TROUPE_DATABASE_DSN":   "sqlite://" + filepath.Join(t.TempDir(), "troupe.db"),
		"TROUPE_MODEL_BASE_URL": fake.URL(),
		"TROUPE_CARDS_DIR":      t.TempDir(),
		"TROUPE_LOG_LEVEL":      "warn",
		"TROUPE_TTS_BASE_URL":   fake.URL(),
		"TROUPE_TTS_VOICE":      "nova",
		"TROUPE_IMAGE_BASE_URL": fake.URL(),
		"TROUPE_IMAGE_SIZE":     "64x64",
	}
	in := strings.NewReader("/voice on\nHello there.\n/picture a gull on the rail\n")
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "5s"},
		in, &out, &errOut, testEnv(vals))
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	got := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\[Maren sent reply\.ogg, [0-9]+ (bytes|KB)\]$`),
		regexp.MustCompile(`(?m)^\[Maren sent picture\.png, [0-9]+ (bytes|KB): a gull on the rail\]$`),
	} {
		if !want.MatchString(got) {
			t.Errorf("the console output lacks %s:\n%s", want, got)
		}
	}
	speech := fake.RequestsTo(openaitest.SpeechPath)
	if len(speech) != 1 || speech[0].Voice != "nova" || speech[0].Model != "tts-1" || speech[0].ResponseFormat != "opus" {
		t.Errorf("speech requests = %+v, want one of tts-1 in voice nova as opus", speech)
	}
	images := fake.RequestsTo(openaitest.ImagesPath)
	if len(images) != 1 || images[0].Size != "64x64" || images[0].Model != "dall-e-3" {
		t.Errorf("image requests = %+v, want one of dall-e-3 at 64x64", images)
	}
}
