// Package media is what troupe does with the pictures, voice notes and
// files players share: what an adapter found in a message (Item, KindOf),
// where its bytes come from (Source; Fetcher reaches only the platform's
// own file hosts, follows redirects only within them and never names a
// URL's path in an error), the limits that bound them (Limits), what they
// become (PrepareImage: a picture sniffed by its bytes, refused when it
// would decode into too many pixels, turned upright, scaled down by an
// area average and sent on as JPEG, a Picture with its data URL;
// ReadText: a text file's text; AudioMIME: a sound file's type), the
// files kept when an operator asks for it (Keep, one directory a chat),
// and the files troupe sends back (File). It imports nothing of troupe's,
// so adapters, the pipeline and the model client all share its types.
package media

import (
	"context"
	"errors"
	"time"
)

// Kind is what an attachment is to the pipeline.
type Kind string

// The kinds of attachment.
const (
	// Image is a picture: sent to a vision model and captioned.
	Image Kind = "image"
	// Voice is a recorded voice note; Audio any other sound file. Both are
	// transcribed and played as the player's line.
	Voice Kind = "voice"
	Audio Kind = "audio"
	// Text is a plain text file (.txt, .md, .json): quoted into the line.
	Text Kind = "text"
)

// Item is one attachment of an inbound message, as its adapter found it.
type Item struct {
	Kind Kind
	// Name is the file's name as the platform gives it ("" for a Telegram
	// photo or voice note, which have none).
	Name string
	// MIME is the content type the platform reports; "" when it reports
	// none. The bytes are checked, never trusted to it.
	MIME string
	// Size is the size in bytes the platform reports, 0 when unknown: an
	// item over a limit is refused before it is downloaded.
	Size int64
	// Duration is a voice note's or audio file's length, 0 when unknown.
	Duration time.Duration
	// Source downloads the bytes. Adapters build it so that it reaches
	// only the platform's own file hosts.
	Source Source
}

// Source downloads an attachment's bytes: at most limit of them, failing
// with ErrTooLarge past that.
type Source interface {
	Download(ctx context.Context, limit int64) ([]byte, error)
}

// File is a file troupe sends: a spoken reply or a picture.
type File struct {
	Kind Kind
	// Name is the file name shown to players (reply.ogg, picture.png).
	Name string
	MIME string
	Data []byte
	// Duration is a spoken file's length when known.
	Duration time.Duration
	// Caption is the text shown with the file, "" for none.
	Caption string
}

// The ways an attachment is refused. Callers tell players which one with a
// notice; the message's text still plays.
var (
	// ErrTooLarge: the item is over its size limit.
	ErrTooLarge = errors.New("media: too large")
	// ErrTooMany: the message carries more items than allowed.
	ErrTooMany = errors.New("media: too many attachments")
	// ErrMalformed: the bytes are not what the item claims to be (an image
	// that does not decode, a text file that is not UTF-8).
	ErrMalformed = errors.New("media: malformed")
	// ErrNotAllowed: the URL is not on one of the platform's file hosts.
	ErrNotAllowed = errors.New("media: host not allowed")
)
