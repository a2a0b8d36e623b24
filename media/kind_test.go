package media

import "testing"

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, mime string
		want       Kind
	}{
		{"photo.jpg", "image/jpeg", Image},
		{"", "image/webp", Image},
		{"x.bin", "IMAGE/PNG; charset=binary", Image},
		{"voice.ogg", "audio/ogg", Audio},
		{"voice-message.ogg", "audio/ogg; codecs=opus", Audio},
		{"", "audio/opus", Audio},
		{"song.mp3", "audio/mpeg", Audio},
		{"memo.m4a", "audio/x-m4a", Audio},
		{"a.m4a", "audio/mp4", Audio},
		{"a.wav", "audio/wav", Audio},
		{"a.webm", "audio/webm", Audio},
		{"a.flac", "audio/flac", Audio},
		{"notes.txt", "text/plain; charset=utf-8", Text},
		{"notes", "text/markdown", Text},
		{"data", "application/json", Text},
		{"notes.md", "", Text},
		{"NOTES.MARKDOWN", "", Text},
		{"data.json", "application/octet-stream", Text},
		{"pic.PNG", "", Image},
		{"voice.opus", "", Audio},
		{"clip.mp4", "video/mp4", ""},
		{"clip.mp4", "", ""},
		{"doc.pdf", "application/pdf", ""},
		{"song.mp3", "application/pdf", ""}, // the content type decides
		{"page.html", "text/html", ""},
		{"", "", ""},
	} {
		if got := KindOf(tt.name, tt.mime); got != tt.want {
			t.Errorf("KindOf(%q, %q) = %q, want %q", tt.name, tt.mime, got, tt.want)
		}
	}
}

func TestAudioMIME(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		data string
		want string
	}{
		{"ogg", "OggS\x00\x02 spoken: hello", "audio/ogg"},
		{"mp3 with ID3", "ID3\x04\x00\x00", "audio/mpeg"},
		{"mp3 frame", "\xff\xfb\x90\x64", "audio/mpeg"},
		{"mpeg-2 frame", "\xff\xf3\x48\xc4", "audio/mpeg"},
		{"AAC ADTS is not MP3", "\xff\xf1\x50\x80", ""},
		{"bad bitrate", "\xff\xfb\xf0\x64", ""},
		{"wav", "RIFF\x24\x00\x00\x00WAVEfmt ", "audio/wav"},
		{"avi is not wav", "RIFF\x24\x00\x00\x00AVI LIST", ""},
		{"flac", "fLaC\x00\x00\x00\x22", "audio/flac"},
		{"m4a", "\x00\x00\x00\x20ftypM4A \x00\x00", "audio/mp4"},
		{"webm", "\x1a\x45\xdf\xa3\x9f\x42\x86\x81", "audio/webm"},
		{"text", "hello", ""},
		{"empty", "", ""},
		{"short", "\xff", ""},
	} {
		if got := AudioMIME([]byte(tt.data)); got != tt.want {
			t.Errorf("AudioMIME(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	d := Limits{}.WithDefaults()
	if d != (Limits{MaxImages: 4, MaxImageBytes: 8 << 20, MaxAudioBytes: 25 << 20, MaxTextChars: 8000, MaxSide: 1024}) {
		t.Errorf("defaults = %+v", d)
	}
	l := Limits{MaxImages: 2, MaxImageBytes: 100, MaxAudioBytes: 200, MaxTextChars: 10, MaxSide: 64}
	if got := l.WithDefaults(); got != l {
		t.Errorf("WithDefaults changed set limits: %+v", got)
	}
	for _, tt := range []struct {
		l    Limits
		k    Kind
		want int64
	}{
		{l, Image, 100},
		{l, Voice, 200},
		{l, Audio, 200},
		{l, Text, 40},
		{l, "", 0},
		{Limits{}, Image, 8 << 20},
		{Limits{}, Text, 32000},
		{Limits{MaxTextChars: -1}, Text, 32000},
	} {
		if got := tt.l.Max(tt.k); got != tt.want {
			t.Errorf("%+v.Max(%q) = %d, want %d", tt.l, tt.k, got, tt.want)
		}
	}
}
