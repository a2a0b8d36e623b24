package media

import (
	"errors"
	"strings"
	"testing"
)

func TestReadText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		data    string
		max     int
		want    string
		wantCut bool
		wantErr error
	}{
		{"plain", "hello\nworld", 100, "hello\nworld", false, nil},
		{"BOM dropped", "\xef\xbb\xbfhello", 100, "hello", false, nil},
		{"CRLF", "a\r\nb\r\n", 100, "a\nb\n", false, nil},
		{"lone CR", "a\rb", 100, "a\nb", false, nil},
		{"clipped by runes", "龍の城で", 2, "龍の", true, nil},
		{"exactly the limit", "abc", 3, "abc", false, nil},
		{"clipped after CRLF", "a\r\nbc", 2, "a\n", true, nil},
		{"default limit", strings.Repeat("x", DefaultMaxTextChars+5), 0, strings.Repeat("x", DefaultMaxTextChars), true, nil},
		{"empty", "", 10, "", false, nil},
		{"invalid UTF-8", "caf\xe9", 100, "", false, ErrMalformed},
		{"NUL", "ab\x00cd", 100, "", false, ErrMalformed},
		{"UTF-16", "\xff\xfeh\x00i\x00", 100, "", false, ErrMalformed},
		{"PNG", "\x89PNG\r\n\x1a\n\x00\x00", 100, "", false, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut, err := ReadText([]byte(tt.data), tt.max)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || err.Error() == tt.wantErr.Error() {
					t.Fatalf("ReadText = %q, %v; want %v with a reason", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || cut != tt.wantCut {
				t.Fatalf("ReadText = %q, %v, %v; want %q, %v", got, cut, err, tt.want, tt.wantCut)
			}
		})
	}
}
