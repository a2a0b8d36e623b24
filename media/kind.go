package media

import (
	"bytes"
	"path"
	"strings"
)

var audioMIMEs = map[string]bool{
	"audio/ogg": true, "audio/opus": true, "audio/mpeg": true, "audio/mp3": true,
	"audio/mp4": true, "audio/x-m4a": true, "audio/m4a": true,
	"audio/wav": true, "audio/x-wav": true, "audio/wave": true, "audio/vnd.wave": true,
	"audio/webm": true, "audio/flac": true, "audio/x-flac": true,
}

var textMIMEs = map[string]bool{
	"text/plain": true, "text/markdown": true, "text/x-markdown": true, "application/json": true,
}

var extKinds = map[string]Kind{
	".png": Image, ".jpg": Image, ".jpeg": Image, ".gif": Image, ".webp": Image,
	".ogg": Audio, ".oga": Audio, ".opus": Audio, ".mp3": Audio, ".m4a": Audio,
	".wav": Audio, ".weba": Audio, ".flac": Audio,
	".txt": Text, ".md": Text, ".markdown": Text, ".json": Text,
}

// KindOf is what an attachment named name with the platform's content type
// mime is to the pipeline: Image (image/*), Audio (the audio types speech
// endpoints take: OGG/Opus, MP3, M4A, WAV, WebM, FLAC), Text (plain text,
// Markdown, JSON), or "" for anything else, which is left out. The content
// type decides when there is one; the name's extension only when it is
// missing or application/octet-stream. Voice notes are Audio here: the
// adapter, which knows one, sets Voice itself.
func KindOf(name, mime string) Kind {
	mime = strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = strings.TrimSpace(mime[:i])
	}
	if mime != "" && mime != "application/octet-stream" {
		switch {
		case strings.HasPrefix(mime, "image/"):
			return Image
		case audioMIMEs[mime]:
			return Audio
		case textMIMEs[mime]:
			return Text
		}
		return ""
	}
	return extKinds[strings.ToLower(path.Ext(name))]
}

// AudioMIME is the content type of a sound file told by its first bytes
// (OGG, MP3 with an ID3 tag or a frame sync, WAV, FLAC, M4A/MP4, WebM),
// "" when it is none of them: the name an upload to a speech endpoint
// gets.
func AudioMIME(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("OggS")):
		return "audio/ogg"
	case bytes.HasPrefix(data, []byte("ID3")):
		return "audio/mpeg"
	case bytes.HasPrefix(data, []byte("fLaC")):
		return "audio/flac"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return "audio/wav"
	case len(data) >= 8 && string(data[4:8]) == "ftyp":
		return "audio/mp4"
	case bytes.HasPrefix(data, []byte{0x1a, 0x45, 0xdf, 0xa3}):
		return "audio/webm"
	case mpegFrameSync(data):
		return "audio/mpeg"
	}
	return ""
}

// mpegFrameSync reports whether data starts with an MPEG audio frame
// header: 11 sync bits, a version that is not reserved, layer I to III (an
// AAC ADTS header has layer 0), a bitrate index that is not "bad".
func mpegFrameSync(data []byte) bool {
	if len(data) < 3 || data[0] != 0xff || data[1]&0xe0 != 0xe0 {
		return false
	}
	version, layer, bitrate := data[1]>>3&3, data[1]>>1&3, data[2]>>4
	return version != 1 && layer != 0 && bitrate != 15
}
