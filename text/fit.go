package text

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// IDSize is the most characters an id from outside troupe may keep as it
// is (a card id from a file name, a platform's external id): the width of
// the columns that hold them (models.IDSize).
const IDSize = 64

// fitHashLen is how many hex digits of the hash FitID keeps.
const fitHashLen = 12

// FitID returns id unchanged when it has at most size characters, else a
// stable stand-in of exactly size characters: the start of id, "~" and a
// hash of the whole id. Two ids that differ anywhere get different stand-ins
// (up to the hash), and the same id always gets the same one, so lookups by
// a long id find what was stored under it.
func FitID(id string, size int) string {
	if utf8.RuneCountInString(id) <= size {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	tail := "~" + hex.EncodeToString(sum[:])[:fitHashLen]
	return CutRunes(id, size-len(tail)) + tail
}

// CutRunes returns the first n characters of s (none for n <= 0).
func CutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// Clip returns s when it has at most n characters, else its first n-1
// characters, without trailing spaces, and "…": a shortened text that says
// it was shortened, n characters at the most (none for n <= 0).
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	return strings.TrimRight(CutRunes(s, n-1), " \t") + "…"
}

// Ellipsis returns s when it has at most n characters, else its first n-1
// characters, exactly as they are, and "…" (just "…" for n <= 1). Unlike
// Clip it keeps spaces before the mark, so a cut is always n characters:
// for names held to a width (a column, a platform's field).
func Ellipsis(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return CutRunes(s, n-1) + "…"
}
