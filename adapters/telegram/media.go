package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/media"
)

// defaultMaxImageBytes is media.max_image_bytes' default, which
// Adapter.MaxImageBytes falls back to.
const defaultMaxImageBytes = media.DefaultMaxImageBytes

// mediaItems are the attachments of m the pipeline takes: its photo (one
// size, see choosePhoto), an image, text or audio document, its voice
// note or audio file. Stickers, videos and other files are left out.
// source builds where an item's bytes come from, given its file id.
func mediaItems(m *tgbotapi.Message, maxImage int64, source func(fileID string) media.Source) []media.Item {
	var items []media.Item
	src := func(id string) media.Source {
		if source == nil {
			return nil
		}
		return source(id)
	}
	if len(m.Photo) > 0 {
		p := choosePhoto(m.Photo, maxImage)
		items = append(items, media.Item{Kind: media.Image, MIME: "image/jpeg", Size: int64(p.FileSize), Source: src(p.FileID)})
	}
	if d := m.Document; d != nil {
		if kind := media.KindOf(d.FileName, d.MimeType); kind != "" {
			items = append(items, media.Item{Kind: kind, Name: d.FileName, MIME: d.MimeType, Size: int64(d.FileSize), Source: src(d.FileID)})
		}
	}
	if v := m.Voice; v != nil {
		mt := v.MimeType
		if mt == "" {
			mt = "audio/ogg"
		}
		items = append(items, media.Item{Kind: media.Voice, MIME: mt, Size: int64(v.FileSize), Duration: seconds(v.Duration), Source: src(v.FileID)})
	}
	if a := m.Audio; a != nil {
		name := a.FileName
		if name == "" {
			name = a.Title
		}
		items = append(items, media.Item{Kind: media.Audio, Name: name, MIME: a.MimeType, Size: int64(a.FileSize), Duration: seconds(a.Duration), Source: src(a.FileID)})
	}
	return items
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// choosePhoto picks the size of a photo to download: the largest whose
// reported size is within maxBytes (or unknown), else the largest of all,
// whose size the pipeline then refuses before downloading it.
func choosePhoto(sizes []tgbotapi.PhotoSize, maxBytes int64) tgbotapi.PhotoSize {
	larger := func(a, b tgbotapi.PhotoSize) bool {
		if a.Width*a.Height != b.Width*b.Height {
			return a.Width*a.Height > b.Width*b.Height
		}
		return a.FileSize > b.FileSize
	}
	fit, largest := -1, 0
	for i, p := range sizes {
		if larger(p, sizes[largest]) {
			largest = i
		}
		if int64(p.FileSize) <= maxBytes && (fit < 0 || larger(p, sizes[fit])) {
			fit = i
		}
	}
	if fit >= 0 {
		return sizes[fit]
	}
	return sizes[largest]
}

// fileEndpoint is the file download endpoint (two %s: the token and the
// file's path) of an API endpoint (two %s: the token and the method), as
// Telegram and the local Bot API server serve them: the method endpoint
// .../bot%s/%s downloads from .../file/bot%s/%s. It reports false for an
// endpoint not of that form.
func fileEndpoint(apiEndpoint string) (string, bool) {
	if apiEndpoint == "" {
		return tgbotapi.FileEndpoint, true
	}
	const tail = "/bot%s/%s"
	base, ok := strings.CutSuffix(apiEndpoint, tail)
	if !ok || strings.Contains(base, "%") {
		return "", false
	}
	return base + "/file" + tail, true
}

// fileRoot is the prefix of every download URL of the bot with token: the
// file endpoint up to the file's path. It holds the token: it is never
// logged nor put in an error.
func fileRoot(apiEndpoint, token string) (string, bool) {
	fe, ok := fileEndpoint(apiEndpoint)
	if !ok {
		return "", false
	}
	return fmt.Sprintf(fe, token, ""), true
}

// fileURL is where root serves the file getFile placed at filePath. A
// path that would leave root (absolute, with "..", a query) is refused;
// so is a local Bot API server's absolute path, which names a file on its
// disk (--local mode) rather than one it serves.
func fileURL(root, filePath string) (string, error) {
	if filePath == "" || strings.HasPrefix(filePath, "/") || strings.ContainsAny(filePath, "?#\\") {
		return "", fmt.Errorf("%w: file path %q", media.ErrNotAllowed, filePath)
	}
	segs := strings.Split(filePath, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", fmt.Errorf("%w: file path %q", media.ErrNotAllowed, filePath)
		}
		segs[i] = url.PathEscape(s)
	}
	return root + strings.Join(segs, "/"), nil
}

// fileSource downloads a file a message carries: getFile for its path when
// the pipeline asks (a file id stays valid, a path for an hour at least),
// then the bytes from the file endpoint and nowhere else.
type fileSource struct {
	a      *Adapter
	fileID string
}

var _ media.Source = fileSource{}

func (a *Adapter) fileSource(fileID string) media.Source { return fileSource{a: a, fileID: fileID} }

// Download returns the file's bytes, at most limit of them: media.ErrTooLarge
// past that (or when Telegram will not let a bot download a file that
// big), media.ErrNotAllowed when the file endpoint is unknown or the path
// would leave it; the errors name no token.
func (s fileSource) Download(ctx context.Context, limit int64) ([]byte, error) {
	a := s.a
	if a.fileRoot == "" {
		return nil, fmt.Errorf("%w: no file endpoint for telegram.api_endpoint", media.ErrNotAllowed)
	}
	if a.api == nil {
		return nil, errors.New("telegram: getFile: not connected")
	}
	resp, err := a.do(ctx, "getFile", tgbotapi.FileConfig{FileID: s.fileID}, true)
	if err != nil {
		if e, ok := asAPI(err); ok && e.Code == 400 && strings.Contains(e.Description, "file is too big") {
			return nil, media.ErrTooLarge
		}
		return nil, err
	}
	var f tgbotapi.File
	if err := json.Unmarshal(resp.Result, &f); err != nil {
		return nil, fmt.Errorf("telegram: getFile: decode result: %w", err)
	}
	if int64(f.FileSize) > limit {
		return nil, media.ErrTooLarge
	}
	u, err := fileURL(a.fileRoot, f.FilePath)
	if err != nil {
		return nil, err
	}
	return media.Fetcher{Client: a.httpc, Allowed: []string{a.fileRoot}}.Source(u).Download(ctx, limit)
}
