package models

import (
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"gorm.io/gorm"

	"troupe/text"
)

// Column sizes (in characters) that text from outside troupe reaches: card
// ids come from file names, console ids from --user.
const (
	// IDSize holds cards.id, spaces.external_id, channels.external_id and
	// messages.author_id.
	IDSize = text.IDSize
	// KeySize holds spaces.id, channels.id and personas.user_key.
	KeySize = 128
	// NameSize holds author and card names.
	NameSize = 200
)

// FitName cuts a display name to at most size characters, marking the cut
// with "…". Names are not looked up, so nothing needs to be stable.
func FitName(name string, size int) string {
	return text.Ellipsis(name, size)
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
