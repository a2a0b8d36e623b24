package media

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Keep stores the files players shared, when media.keep is on, one
// directory a chat (Dir/<chat id>/) so a chat's files are forgotten with
// it. Directories are 0700 and files 0600: they are players' pictures.
type Keep struct {
	Dir string
}

// maxNameBytes bounds a kept file's name (most file systems take 255).
const maxNameBytes = 100

// Save stores data as name in chatID's directory and returns its path. The
// chat id must be a plain name (letters, digits, '-', '_', '.', not
// starting with '.'), else Save refuses it: two ids must never share a
// directory. The name is cleaned to its last element in letters, digits,
// '-', '_' and '.' ("file" when nothing is left), and a name already taken
// gets -2, -3, … before its extension: nothing kept is overwritten.
func (k Keep) Save(chatID, name string, data []byte) (string, error) {
	dir, err := k.chatDir(chatID)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("media: keep: %w", err)
	}
	base := safeName(name)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for n := 1; ; n++ {
		p := filepath.Join(dir, base)
		if n > 1 {
			p = filepath.Join(dir, stem+"-"+strconv.Itoa(n)+ext)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("media: keep: %w", err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return "", fmt.Errorf("media: keep: %w", err)
		}
		return p, nil
	}
}

// ForgetChat removes everything kept for chatID; nil when nothing was.
func (k Keep) ForgetChat(chatID string) error {
	dir, err := k.chatDir(chatID)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("media: forget chat files: %w", err)
	}
	return nil
}

// Files lists the paths kept for chatID, sorted; none when nothing was.
func (k Keep) Files(chatID string) ([]string, error) {
	dir, err := k.chatDir(chatID)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("media: keep: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

func (k Keep) chatDir(chatID string) (string, error) {
	if k.Dir == "" {
		return "", errors.New("media: keep: no directory configured")
	}
	if !safeID(chatID) {
		return "", fmt.Errorf("media: keep: chat id %q is not a plain name", chatID)
	}
	return filepath.Join(k.Dir, chatID), nil
}

func safeID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for _, r := range id {
		if !plainRune(r) {
			return false
		}
	}
	return true
}

func plainRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
}

// safeName is name's last path element (either separator) with anything
// but plain runes made '_', no leading dots, at most maxNameBytes.
func safeName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		if plainRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if len(s) > maxNameBytes {
		ext := filepath.Ext(s)
		if len(ext) > 10 {
			ext = ""
		}
		s = s[:maxNameBytes-len(ext)] + ext
	}
	if strings.Trim(s, "_") == "" {
		return "file"
	}
	return s
}
