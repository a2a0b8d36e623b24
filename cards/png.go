package cards

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxPNGBytes bounds a PNG card file: the picture and the card together.
const MaxPNGBytes = 20 << 20

// maxTextChunk bounds one text chunk: a card's JSON in base64.
const maxTextChunk = MaxCardJSON/3*4 + 1024

// maxInflated bounds what a PNG's compressed card chunks inflate to, all
// of them together: each may hold a whole card, but a file of many small
// chunks each inflating to the limit would otherwise cost minutes of CPU.
const maxInflated = maxTextChunk

// maxRatio bounds how many times its compressed size a card chunk may
// inflate to beyond the first inflateFloor bytes: a card's base64 JSON
// compresses a few times at most, and a bomb a thousand, so a bomb is
// refused after a little inflating rather than a whole card's worth.
const (
	maxRatio     = 100
	inflateFloor = 1 << 20
)

// maxCardChunks bounds the chara and ccv3 chunks of one PNG (a card has one
// of each; a few repeats are tolerated), and maxPNGChunks all its chunks.
const (
	maxCardChunks = 4
	maxPNGChunks  = 1 << 16
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// pngText is what a PNG's text chunks say about the card.
type pngText struct {
	chara, ccv3 []byte
}

// ReadPNG reads a card from a PNG stream: the base64 JSON of its `ccv3`
// (preferred) or `chara` text chunk, in tEXt, iTXt or zTXt. The picture,
// without the card chunks, becomes the card's Image when it is at most
// MaxImageBytes. The stream is read chunk by chunk and never beyond
// MaxPNGBytes; errors wrap ErrCardInvalid.
func ReadPNG(r io.Reader) (Card, error) {
	text, img, err := readPNGChunks(r)
	if err != nil {
		return Card{}, err
	}
	var c Card
	switch {
	case text.ccv3 != nil:
		c, err = parseChunk("ccv3", text.ccv3)
		if err != nil && text.chara != nil {
			// SillyTavern falls back to chara when ccv3 does not read.
			if c2, err2 := parseChunk("chara", text.chara); err2 == nil {
				c, err = c2, nil
			}
		}
	case text.chara != nil:
		c, err = parseChunk("chara", text.chara)
	default:
		return Card{}, fmt.Errorf("%w: a PNG without a character card (no chara or ccv3 text chunk)", ErrNotCard)
	}
	if err != nil {
		return Card{}, err
	}
	c.Format = "png"
	c.Image = img
	return c, nil
}

// parseChunk decodes a card chunk's base64 JSON (raw JSON is taken too).
func parseChunk(key string, text []byte) (Card, error) {
	text = bytes.TrimSpace(text)
	data := text
	if len(text) > 0 && text[0] != '{' {
		clean := bytes.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == ' ' || r == '\t' || r == '=' {
				return -1
			}
			return r
		}, text)
		data = make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
		n, err := base64.RawStdEncoding.Decode(data, clean)
		if err != nil {
			n, err = base64.RawURLEncoding.Decode(data, clean)
		}
		if err != nil {
			return Card{}, fmt.Errorf("%w: PNG %s chunk is not base64: %v", ErrCardInvalid, key, err)
		}
		data = data[:n]
	}
	c, err := ParseCard(data)
	if err != nil {
		return Card{}, fmt.Errorf("PNG %s chunk: %w", key, err)
	}
	return c, nil
}

// readPNGChunks walks the chunks of a PNG stream, keeping the card text and
// the other chunks (the picture) up to MaxImageBytes.
func readPNGChunks(r io.Reader) (pngText, []byte, error) {
	lr := &io.LimitedReader{R: r, N: MaxPNGBytes + 1}
	var sig [8]byte
	if _, err := io.ReadFull(lr, sig[:]); err != nil || !bytes.Equal(sig[:], pngSignature) {
		return pngText{}, nil, fmt.Errorf("%w: not a PNG", ErrCardInvalid)
	}
	var text pngText
	// The picture's chunks, each read into a slice of its own size, so that
	// holding the picture costs its size and joining it once more.
	img := [][]byte{pngSignature}
	imgLen := len(pngSignature)
	keepImage := true
	keep := func(chunk []byte) {
		if keepImage && imgLen+len(chunk) <= MaxImageBytes {
			img, imgLen = append(img, chunk), imgLen+len(chunk)
		} else {
			keepImage, img = false, nil
		}
	}
	// budget is what compressed card chunks may still inflate to.
	budget := int64(maxInflated)
	for chunks, cardChunks := 0, 0; ; chunks++ {
		if chunks >= maxPNGChunks {
			return pngText{}, nil, fmt.Errorf("%w: the PNG has more than %d chunks", ErrTooLarge, maxPNGChunks)
		}
		var hdr [8]byte
		if _, err := io.ReadFull(lr, hdr[:]); err != nil {
			if lr.N <= 0 {
				return pngText{}, nil, tooBigPNG()
			}
			if text.chara != nil || text.ccv3 != nil {
				// A truncated picture after the card: the card stands.
				return text, nil, nil
			}
			return pngText{}, nil, fmt.Errorf("%w: the PNG ends before its IEND chunk", ErrCardInvalid)
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := string(hdr[4:])
		if n > MaxPNGBytes {
			return pngText{}, nil, tooBigPNG()
		}
		isText := typ == "tEXt" || typ == "iTXt" || typ == "zTXt"
		if isText && n > maxTextChunk {
			return pngText{}, nil, fmt.Errorf("%w: a PNG text chunk of %s; a card's may have %s", ErrTooLarge, megabytes64(n), megabytes(maxTextChunk))
		}
		if isText || keepImage && int64(imgLen)+n+12 <= MaxImageBytes {
			chunk := make([]byte, 8+n+4)
			copy(chunk, hdr[:])
			if _, err := io.ReadFull(lr, chunk[8:]); err != nil {
				return pngText{}, nil, pngReadError(lr, err)
			}
			if isText {
				if isCardChunk(chunk[8 : 8+n]) {
					// Counted before it is inflated.
					if cardChunks++; cardChunks > maxCardChunks {
						return pngText{}, nil, fmt.Errorf("%w: the PNG has more than %d chara and ccv3 chunks", ErrTooLarge, maxCardChunks)
					}
				}
				key, val, err := textChunk(typ, chunk[8:8+n], &budget)
				if err != nil {
					return pngText{}, nil, err
				}
				switch strings.ToLower(key) {
				case "chara":
					text.chara = val
					continue
				case "ccv3":
					text.ccv3 = val
					continue
				}
			}
			keep(chunk)
		} else {
			keepImage, img = false, nil
			if _, err := io.CopyN(io.Discard, lr, n+4); err != nil {
				return pngText{}, nil, pngReadError(lr, err)
			}
		}
		if typ == "IEND" {
			break
		}
	}
	if !keepImage {
		return text, nil, nil
	}
	return text, bytes.Join(img, nil), nil
}

func tooBigPNG() error {
	return fmt.Errorf("%w: the PNG is larger than %s", ErrTooLarge, megabytes(MaxPNGBytes))
}

func pngReadError(lr *io.LimitedReader, err error) error {
	if lr.N <= 0 {
		return tooBigPNG()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the PNG is cut short inside a chunk", ErrCardInvalid)
	}
	return fmt.Errorf("cards: read PNG: %w", err)
}

// isCardChunk reports whether a text chunk's keyword is chara or ccv3.
func isCardChunk(body []byte) bool {
	key, _, ok := bytes.Cut(body, []byte{0})
	k := strings.ToLower(string(key))
	return ok && (k == "chara" || k == "ccv3")
}

// textChunk returns the keyword and text of a tEXt, zTXt or iTXt chunk;
// compressed text is inflated up to maxTextChunk, and up to what is left of
// *budget, which it lowers by what it inflated.
func textChunk(typ string, body []byte, budget *int64) (string, []byte, error) {
	key, rest, ok := bytes.Cut(body, []byte{0})
	if !ok {
		return "", nil, nil // no keyword: not ours, kept with the picture
	}
	if k := strings.ToLower(string(key)); k != "chara" && k != "ccv3" {
		return string(key), nil, nil
	}
	switch typ {
	case "tEXt":
		return string(key), rest, nil
	case "zTXt":
		if len(rest) < 1 {
			return string(key), nil, nil
		}
		val, err := inflate(rest[1:], budget)
		return string(key), val, err
	}
	// iTXt: compression flag, method, language\0, translated keyword\0, text.
	if len(rest) < 2 {
		return string(key), nil, nil
	}
	compressed := rest[0] == 1
	_, rest, ok1 := bytes.Cut(rest[2:], []byte{0})
	_, val, ok2 := bytes.Cut(rest, []byte{0})
	if !ok1 || !ok2 {
		return string(key), nil, nil
	}
	if compressed {
		v, err := inflate(val, budget)
		return string(key), v, err
	}
	return string(key), val, nil
}

// inflate decompresses zlib data, refusing more than maxTextChunk bytes and
// more than *budget, which it lowers by what it inflated.
func inflate(data []byte, budget *int64) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: a compressed PNG text chunk does not inflate: %v", ErrCardInvalid, err)
	}
	defer zr.Close()
	ratioCap := max(int64(inflateFloor), int64(len(data))*maxRatio)
	limit := min(int64(maxTextChunk), *budget, ratioCap)
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: a compressed PNG text chunk does not inflate: %v", ErrCardInvalid, err)
	}
	*budget -= int64(len(out))
	if int64(len(out)) > limit && limit == ratioCap && ratioCap < maxTextChunk {
		return nil, fmt.Errorf("%w: a compressed PNG text chunk inflates beyond %d times its size", ErrTooLarge, maxRatio)
	}
	if int64(len(out)) > limit && limit < maxTextChunk {
		return nil, fmt.Errorf("%w: the PNG's compressed text chunks inflate beyond %s in all", ErrTooLarge, megabytes(maxInflated))
	}
	if len(out) > maxTextChunk {
		return nil, fmt.Errorf("%w: a compressed PNG text chunk inflates beyond %s", ErrTooLarge, megabytes(maxTextChunk))
	}
	return out, nil
}
