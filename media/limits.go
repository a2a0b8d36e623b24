package media

// Limits bound what one message may bring: how many images, how large
// each kind of file, how much text, how large a picture sent on.
type Limits struct {
	MaxImages     int
	MaxImageBytes int64
	MaxAudioBytes int64
	MaxTextChars  int
	MaxSide       int
}

// The defaults of Limits.
const (
	DefaultMaxImages     = 4
	DefaultMaxImageBytes = 8 << 20
	DefaultMaxAudioBytes = 25 << 20
)

// WithDefaults is l with each zero or negative field set to its default:
// 4 images, 8 MB an image, 25 MB of audio (the speech endpoints' own
// limit), 8000 characters of text, 1024 pixels a side.
func (l Limits) WithDefaults() Limits {
	if l.MaxImages <= 0 {
		l.MaxImages = DefaultMaxImages
	}
	if l.MaxImageBytes <= 0 {
		l.MaxImageBytes = DefaultMaxImageBytes
	}
	if l.MaxAudioBytes <= 0 {
		l.MaxAudioBytes = DefaultMaxAudioBytes
	}
	if l.MaxTextChars <= 0 {
		l.MaxTextChars = DefaultMaxTextChars
	}
	if l.MaxSide <= 0 {
		l.MaxSide = DefaultMaxSide
	}
	return l
}

// Max is the most bytes an item of kind k may have (defaults where l has
// none): a text file may take 4 bytes a character, the most UTF-8 needs.
// An unknown kind gets 0: nothing is downloaded for it.
func (l Limits) Max(k Kind) int64 {
	l = l.WithDefaults()
	switch k {
	case Image:
		return l.MaxImageBytes
	case Voice, Audio:
		return l.MaxAudioBytes
	case Text:
		return int64(l.MaxTextChars) * 4
	}
	return 0
}
