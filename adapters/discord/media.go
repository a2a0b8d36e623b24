package discord

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"troupe/config"
	"troupe/media"
)

// Pictures, voice messages and files in: a message's attachments become the
// pipeline's media items (pictures, voice messages, other sound files, text
// files; anything else is left out), and so do its embeds' pictures when
// they are files on Discord's own hosts. Every item downloads through a
// media.Fetcher that reaches only discord.cdn_base_url (and Discord's media
// proxy when that is Discord's CDN): a link in a message never makes troupe
// fetch from anywhere else.

// downloadTimeout bounds one download, whatever the caller's context says.
const downloadTimeout = 2 * time.Minute

// fileHosts are the URL prefixes attachments are downloaded from.
func fileHosts(cfg config.Discord) []string {
	base := cfg.CDNBaseURL
	if base == "" {
		base = config.DiscordCDNURL
	}
	if base == config.DiscordCDNURL {
		return []string{config.DiscordCDNURL, config.DiscordMediaURL}
	}
	return []string{base}
}

// checkFileHost validates discord.cdn_base_url as New takes it.
func checkFileHost(base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(u.Path, "/") {
		return fmt.Errorf("discord: cdn_base_url %q is not an http(s) URL ending in /", base)
	}
	return nil
}

// newFetcher is the downloader of a message's files: only from hosts (and
// redirects only within them, which media.Fetcher checks).
func newFetcher(hosts []string) media.Fetcher {
	return media.Fetcher{Client: &http.Client{Timeout: downloadTimeout}, Allowed: hosts}
}

// onHosts reports whether raw is a URL under one of the prefixes in hosts:
// same scheme and host, path under the prefix's.
func onHosts(hosts []string, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	for _, h := range hosts {
		p, err := url.Parse(h)
		if err != nil || p.Host == "" {
			continue
		}
		if u.Scheme == p.Scheme && strings.EqualFold(u.Host, p.Host) && strings.HasPrefix(u.EscapedPath(), p.EscapedPath()) {
			return true
		}
	}
	return false
}

// mediaOf are m's attachments and its embeds' pictures on the file hosts,
// in the order Discord lists them, attachments first.
func (a *Adapter) mediaOf(m *discordgo.Message) []media.Item {
	var items []media.Item
	seen := map[string]bool{}
	voice := m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0
	for _, att := range m.Attachments {
		if att == nil || att.URL == "" {
			continue
		}
		kind, ok := kindOf(att.Filename, att.ContentType, voice)
		if !ok {
			continue
		}
		seen[stripQuery(att.URL)] = true
		items = append(items, media.Item{
			Kind:     kind,
			Name:     att.Filename,
			MIME:     att.ContentType,
			Size:     int64(att.Size),
			Duration: time.Duration(att.DurationSecs * float64(time.Second)),
			Source:   a.fetch.Source(att.URL),
		})
	}
	for _, u := range embedPictures(m.Embeds) {
		key := stripQuery(u)
		if seen[key] || !onHosts(a.fetch.Allowed, u) {
			continue
		}
		seen[key] = true
		items = append(items, media.Item{Kind: media.Image, Name: nameOf(u), Source: a.fetch.Source(u)})
	}
	return items
}

// embedPictures are the URLs of the pictures embeds show: an embed's image
// and its thumbnail (a link to a picture becomes an "image" embed with the
// picture as its thumbnail). The proxy URLs are left alone: Discord's
// proxy fetches from anywhere.
func embedPictures(embeds []*discordgo.MessageEmbed) []string {
	var out []string
	for _, e := range embeds {
		if e == nil {
			continue
		}
		if e.Image != nil && e.Image.URL != "" {
			out = append(out, e.Image.URL)
		}
		if e.Thumbnail != nil && e.Thumbnail.URL != "" {
			out = append(out, e.Thumbnail.URL)
		}
	}
	return out
}

// kindOf is what an attachment is to the pipeline (media.KindOf: by its
// content type, else its name); false for anything troupe leaves out. voice
// says the message is a voice message, whose sound file is a Voice.
func kindOf(filename, contentType string, voice bool) (media.Kind, bool) {
	k := media.KindOf(filename, contentType)
	if k == "" {
		return "", false
	}
	if k == media.Audio && voice {
		return media.Voice, true
	}
	return k, true
}

func stripQuery(u string) string {
	base, _, _ := strings.Cut(u, "?")
	return base
}

// nameOf is the file name at the end of a URL's path.
func nameOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}
