package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/media"
	"troupe/models"
)

// `troupe memory forget` removes the chat's kept originals with the chat:
// the removal is registered on the memory service every forget goes
// through (/forget, this command, the inspector).
func TestMemoryForgetRemovesKeptFiles(t *testing.T) {
	vals := backends(t)["sqlite+embedded"]
	fake := openaitest.NewServer(t)
	fake.SetResponder((&memorytest.Scribe{}).Respond)
	dir := filepath.Join(t.TempDir(), "media")
	vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
	vals["TROUPE_CARDS_DIR"] = t.TempDir()
	vals["TROUPE_LOG_LEVEL"] = "warn"
	vals["TROUPE_MEDIA_KEEP"] = "true"
	vals["TROUPE_MEDIA_DIR"] = dir
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "10s"},
		strings.NewReader("I show you a drawing of the tower.\n"), &out, &errOut, testEnv(vals)); err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut.String())
	}
	st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chats, _ := st.ChannelChats(ctx, "console:Ada/lantern-keeper")
	if len(chats) != 1 {
		t.Fatalf("%d chats, want 1", len(chats))
	}
	// The console sends no attachments: the chat's kept file is put
	// where the pipeline keeps one.
	keep := media.Keep{Dir: dir}
	if _, err := keep.Save(chats[0].ID, "tower.png", openaitest.Picture("grey", 8, 8)); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"memory", "forget", "--chat", chats[0].ID, "--yes"}, nil, &out, &errOut, testEnv(vals)); err != nil {
		t.Fatalf("memory forget: %v %s", err, errOut.String())
	}
	if files, err := keep.Files(chats[0].ID); err != nil || len(files) != 0 {
		t.Errorf("after memory forget the chat keeps %q (%v)", files, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("after memory forget the media folder holds %d entries", len(entries))
	}
}
