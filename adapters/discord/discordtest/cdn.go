package discordtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image"
	_ "image/gif" // image sizes of posted GIFs
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Files: the server is also Discord's CDN (CDNURL, like
// https://cdn.discordapp.com/) and its media proxy (MediaURL, like
// https://media.discordapp.net/). A message's attachments, the ones a test
// posts and the ones the client uploads, are served at
// <cdn>attachments/<channel id>/<attachment id>/<filename> with Discord's
// signature query (ex, is, hm), and at the same path under the media proxy;
// an embed's image off the CDN has a proxy URL under <media>external/, which
// the proxy fetches from the image's own host as Discord does.

// VoiceMessageFlag is the message flag IS_VOICE_MESSAGE.
const VoiceMessageFlag = 1 << 13

// UploadLimit is how many bytes of files one message may carry: Discord's
// limit for a bot in a guild without boosts (10 MiB).
const UploadLimit = 10 << 20

// Attachment is a file on a message: one a test posts as a user's (fill
// Filename, ContentType, Data and, for a voice message, Duration), or one
// the client uploaded. The server fills ID, URL and ProxyURL.
type Attachment struct {
	ID          string
	Filename    string
	ContentType string
	Data        []byte
	// Size is the size the message reports; 0 means len(Data). A test sets
	// it to post a file larger than the bytes it bothers to serve.
	Size int
	// Width and Height are an image's; 0 reads them from Data (Discord
	// gives none for bytes that are not an image it reads).
	Width, Height int
	// Duration (seconds) and Waveform are a voice message's; Waveform ""
	// gets a made-up one.
	Duration float64
	Waveform string
	// Description is the file's alt text.
	Description string
	URL         string
	ProxyURL    string
}

// VoiceMessage is the attachment of a voice message as Discord's clients
// record one: voice-message.ogg, audio/ogg, with a duration. Post it with
// Flags: VoiceMessageFlag.
func VoiceMessage(data []byte, seconds float64) Attachment {
	return Attachment{Filename: "voice-message.ogg", ContentType: "audio/ogg", Data: data, Duration: seconds}
}

// Embed is an embed on a user's message. Type "image" is what Discord
// makes of a link to a picture (the picture as its thumbnail); "rich" (the
// default) carries Image and Thumbnail as given.
type Embed struct {
	Type        string
	URL         string
	Title       string
	Description string
	// Image and Thumbnail are URLs of pictures, on the CDN or anywhere.
	Image     string
	Thumbnail string
}

// CDNURL is the base of attachment URLs, ending in /: configure it as
// discord.cdn_base_url.
func (s *Server) CDNURL() string { return s.srv.URL + "/cdn/" }

// MediaURL is the base of the media proxy's URLs, ending in /.
func (s *Server) MediaURL() string { return s.srv.URL + "/media/" }

// CDNRequests are the paths (with /cdn or /media in front) of every file
// request the CDN and the media proxy received, in order.
func (s *Server) CDNRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cdnHits...)
}

// AddFile puts a file on the CDN as if someone had posted it in channelID
// earlier, and returns it with its URLs: a link a test's message can embed.
func (s *Server) AddFile(channelID string, a Attachment) Attachment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeFileLocked(channelID, a)
}

// storeFileLocked gives a an id and URLs and serves it; s.mu must be held.
func (s *Server) storeFileLocked(channelID string, a Attachment) Attachment {
	a.ID = s.newIDLocked()
	a.Filename = cleanFilename(a.Filename)
	if a.Size == 0 {
		a.Size = len(a.Data)
	}
	if a.Width == 0 && a.Height == 0 && strings.HasPrefix(a.ContentType, "image/") {
		if c, _, err := image.DecodeConfig(bytes.NewReader(a.Data)); err == nil {
			a.Width, a.Height = c.Width, c.Height
		}
	}
	p := "attachments/" + channelID + "/" + a.ID + "/" + url.PathEscape(a.Filename)
	q := s.signature(p)
	a.URL, a.ProxyURL = s.CDNURL()+p+q, s.MediaURL()+p+q
	if s.files == nil {
		s.files = map[string]Attachment{}
	}
	s.files[channelID+"/"+a.ID+"/"+a.Filename] = a
	return a
}

// signature is Discord's query on a CDN URL: when it expires, when it was
// issued, and a hash.
func (s *Server) signature(p string) string {
	now := time.Now()
	sum := sha256.Sum256([]byte(p + s.opt.Token))
	return "?ex=" + strconv.FormatInt(now.Add(24*time.Hour).Unix(), 16) + "&is=" + strconv.FormatInt(now.Unix(), 16) +
		"&hm=" + hex.EncodeToString(sum[:]) + "&"
}

// cleanFilename is a file name as Discord keeps it: characters other than
// letters, digits, dot, dash and underscore become underscores.
func cleanFilename(name string) string {
	if name == "" {
		name = "unknown"
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// serveFile serves GET/HEAD /cdn/attachments/… and /media/attachments/…,
// and the media proxy's /media/external/….
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.cdnHits = append(s.cdnHits, r.URL.Path)
	s.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/cdn/"), "/media/")
	if ext, ok := strings.CutPrefix(rest, "external/"); ok && strings.HasPrefix(r.URL.Path, "/media/") {
		s.proxyExternal(w, r, ext)
		return
	}
	key, ok := strings.CutPrefix(rest, "attachments/")
	s.mu.Lock()
	a, found := s.files[key]
	s.mu.Unlock()
	if !ok || !found {
		http.Error(w, "This content is no longer available.", http.StatusNotFound)
		return
	}
	ct := a.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Data)))
	w.Header().Set("Cache-Control", "public, max-age=31536000")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(a.Data)
}

// externalURL is the media proxy's URL of a picture elsewhere, in
// Discord's shape: <media>external/<hash>/<scheme>/<host>/<path>.
func (s *Server) externalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(raw))
	return s.MediaURL() + "external/" + base64.RawURLEncoding.EncodeToString(sum[:16]) + "/" + u.Scheme + "/" + u.Host + u.EscapedPath()
}

// proxyExternal fetches a picture from its own host, as Discord's media
// proxy does; only loopback hosts, since the server is a test's.
func (s *Server) proxyExternal(w http.ResponseWriter, r *http.Request, ext string) {
	parts := strings.SplitN(ext, "/", 4)
	if len(parts) < 3 {
		http.NotFound(w, r)
		return
	}
	scheme, host, p := parts[1], parts[2], ""
	if len(parts) == 4 {
		p = parts[3]
	}
	if h, _, _ := strings.Cut(host, ":"); h != "127.0.0.1" && h != "localhost" && h != "[::1]" {
		http.Error(w, "not proxied", http.StatusBadGateway)
		return
	}
	resp, err := http.Get(scheme + "://" + host + "/" + p)
	if err != nil {
		http.Error(w, "upstream failed", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// attachmentJSON is an attachment object as Discord sends it.
func attachmentJSON(a Attachment) obj {
	o := obj{"id": a.ID, "filename": a.Filename, "size": a.Size, "url": a.URL, "proxy_url": a.ProxyURL}
	if a.ContentType != "" {
		o["content_type"] = a.ContentType
	}
	if a.Description != "" {
		o["description"] = a.Description
	}
	if a.Width > 0 || a.Height > 0 {
		o["width"], o["height"] = a.Width, a.Height
		o["placeholder"], o["placeholder_version"] = "2ykGBQBWdnd4h3d4eId3h3d3hwd4", 1
	}
	if a.Duration > 0 {
		o["duration_secs"] = a.Duration
		wf := a.Waveform
		if wf == "" {
			wf = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0, 40, 120, 200, 90, 10}, 8))
		}
		o["waveform"] = wf
	}
	return o
}

// embedJSON is an embed object as Discord sends it: pictures with their
// proxy URLs and, for CDN files, their sizes. s.mu must not be held.
func (s *Server) embedJSON(e Embed) obj {
	typ := e.Type
	if typ == "" {
		typ = "rich"
	}
	o := obj{"type": typ}
	if e.URL != "" {
		o["url"] = e.URL
	}
	if e.Title != "" {
		o["title"] = e.Title
	}
	if e.Description != "" {
		o["description"] = e.Description
	}
	pic := func(raw string) obj {
		p := obj{"url": raw}
		base, _, _ := strings.Cut(raw, "?")
		s.mu.Lock()
		var found *Attachment
		for _, a := range s.files {
			if u, _, _ := strings.Cut(a.URL, "?"); u == base {
				found = &a
				break
			}
		}
		s.mu.Unlock()
		if found != nil {
			p["proxy_url"] = found.ProxyURL
			if found.Width > 0 {
				p["width"], p["height"] = found.Width, found.Height
			}
		} else if px := s.externalURL(raw); px != "" {
			p["proxy_url"] = px
		}
		return p
	}
	if e.Image != "" {
		o["image"] = pic(e.Image)
	}
	if e.Thumbnail != "" {
		o["thumbnail"] = pic(e.Thumbnail)
	}
	return o
}
