package models

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Column sizes (in characters) that text from outside troupe reaches: card
// ids come from file names, console ids from --user.
const (
	// IDSize holds cards.id, spaces.external_id, channels.external_id and
	// messages.author_id.
	IDSize = 64
	// KeySize holds spaces.id, channels.id and personas.user_key.
	KeySize = 128
	// NameSize holds author and card names.
	NameSize = 200
)

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
	return cutRunes(id, size-len(tail)) + tail
}

// FitName cuts a display name to at most size characters, marking the cut
// with "…". Names are not looked up, so nothing needs to be stable.
func FitName(name string, size int) string {
	if utf8.RuneCountInString(name) <= size {
		return name
	}
	return cutRunes(name, size-1) + "…"
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
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

// ErrTooLong is wrapped by a TooLongError.
var ErrTooLong = errors.New("models: value longer than its column")

// TooLongError is a value refused before the database sees it, so SQLite
// (which would store it) and PostgreSQL (which would fail with a raw error)
// refuse it alike.
type TooLongError struct {
	Table, Column string
	Len, Max      int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("models: %s.%s holds at most %d characters; got %d", e.Table, e.Column, e.Max, e.Len)
}

func (e *TooLongError) Unwrap() error { return ErrTooLong }

// checkSizes is a GORM callback run before every create: each sized string
// column of the rows written must fit.
func checkSizes(db *gorm.DB) {
	stmt := db.Statement
	if db.Error != nil || stmt.Schema == nil {
		return
	}
	rv := stmt.ReflectValue
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			if err := rowFits(stmt, reflect.Indirect(rv.Index(i))); err != nil {
				_ = db.AddError(err)
				return
			}
		}
	case reflect.Struct:
		if err := rowFits(stmt, rv); err != nil {
			_ = db.AddError(err)
		}
	}
}

func rowFits(stmt *gorm.Statement, row reflect.Value) error {
	if row.Kind() != reflect.Struct {
		return nil
	}
	for _, f := range stmt.Schema.Fields {
		if f.Size <= 0 || f.DBName == "" || f.IndirectFieldType.Kind() != reflect.String {
			continue
		}
		v, zero := f.ValueOf(stmt.Context, row)
		if zero {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case *string:
			s = *x
		default:
			continue
		}
		if n := utf8.RuneCountInString(s); n > f.Size {
			return &TooLongError{Table: stmt.Schema.Table, Column: f.DBName, Len: n, Max: f.Size}
		}
	}
	return nil
}

// messageFits checks the sized columns of a message that Append writes
// with its own SQL, past the callbacks.
func messageFits(m *Message) error {
	check := func(col, v string, max int) error {
		if n := utf8.RuneCountInString(v); n > max {
			return &TooLongError{Table: "messages", Column: col, Len: n, Max: max}
		}
		return nil
	}
	err := errors.Join(check("author_id", m.AuthorID, IDSize), check("author_name", m.AuthorName, NameSize), check("role", m.Role, 16),
		check("speaker_card_id", m.SpeakerCardID, IDSize), check("whisper_to", m.WhisperTo, NameSize))
	if m.DedupKey != nil {
		err = errors.Join(err, check("dedup_key", *m.DedupKey, 200))
	}
	return err
}

// registerSizeChecks makes every create check its sizes first.
func registerSizeChecks(db *gorm.DB) error {
	return db.Callback().Create().Before("gorm:create").Register("troupe:check_sizes", checkSizes)
}
