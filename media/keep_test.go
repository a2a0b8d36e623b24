package media

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeep(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	k := Keep{Dir: filepath.Join(root, "media")}
	const chat = "01HZX3Q5N8K2M4P6R8T0V2W4Y6"

	p1, err := k.Save(chat, "photo.jpg", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := k.Save(chat, "photo.jpg", []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if p1 == p2 || filepath.Base(p2) != "photo-2.jpg" {
		t.Errorf("second photo.jpg saved as %s (first %s), want photo-2.jpg beside it", p2, p1)
	}
	if got, _ := os.ReadFile(p1); !bytes.Equal(got, []byte("one")) {
		t.Errorf("first file holds %q, want one", got)
	}
	for _, p := range []string{p1, p2} {
		if filepath.Dir(p) != filepath.Join(k.Dir, chat) {
			t.Errorf("%s is not in the chat's directory", p)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", p, fi.Mode().Perm(), err)
		}
	}
	for _, d := range []string{k.Dir, filepath.Join(k.Dir, chat)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 0700", d, fi.Mode().Perm(), err)
		}
	}

	other, err := k.Save("other-chat", "a.png", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := k.Files(chat)
	if err != nil || len(files) != 2 || files[0] != p2 || files[1] != p1 { // sorted: '-' < '.'
		t.Fatalf("Files = %v, %v; want [%s %s]", files, err, p2, p1)
	}
	if err := k.ForgetChat(chat); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(k.Dir, chat)); !os.IsNotExist(err) {
		t.Errorf("chat directory still there after ForgetChat: %v", err)
	}
	if files, err := k.Files(chat); err != nil || len(files) != 0 {
		t.Errorf("Files after ForgetChat = %v, %v; want none", files, err)
	}
	if err := k.ForgetChat(chat); err != nil {
		t.Errorf("ForgetChat of a chat with nothing kept = %v, want nil", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another chat's file went with it: %v", err)
	}
}

// No chat id or file name reaches outside Dir/<chat id>/.
func TestKeepTraversal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	k := Keep{Dir: filepath.Join(root, "media")}
	for _, id := range []string{"", "..", ".", "../x", "a/b", `a\b`, "/etc", ".hidden", "a b", strings.Repeat("x", 200)} {
		if _, err := k.Save(id, "f.txt", []byte("x")); err == nil {
			t.Errorf("Save(chat %q) succeeded, want refused", id)
		}
		if err := k.ForgetChat(id); err == nil {
			t.Errorf("ForgetChat(%q) succeeded, want refused", id)
		}
		if _, err := k.Files(id); err == nil {
			t.Errorf("Files(%q) succeeded, want refused", id)
		}
	}
	for _, tt := range []struct{ name, want string }{
		{"../../etc/passwd", "passwd"},
		{"/etc/passwd", "passwd"},
		{`..\..\boot.ini`, "boot.ini"},
		{"..", "file"},
		{"", "file"},
		{".bashrc", "bashrc"},
		{"龍.png", "_.png"},
		{"a b?.jpg", "a_b_.jpg"},
		{strings.Repeat("n", 300) + ".jpg", strings.Repeat("n", 96) + ".jpg"},
	} {
		p, err := k.Save("chat1", tt.name, []byte("x"))
		if err != nil {
			t.Fatalf("Save(%q): %v", tt.name, err)
		}
		if filepath.Dir(p) != filepath.Join(k.Dir, "chat1") || !strings.HasPrefix(filepath.Base(p), strings.TrimSuffix(tt.want, filepath.Ext(tt.want))) {
			t.Errorf("Save(%q) = %s, want %s in the chat's directory", tt.name, p, tt.want)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || entries[0].Name() != "media" {
		t.Errorf("something was written beside Dir: %v", entries)
	}
	if _, err := (Keep{}).Save("chat1", "a", nil); err == nil {
		t.Error("Save with no Dir succeeded")
	}
}
