package text

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	t.Parallel()
	var words, runs []string
	Words("Tess's 2 Keys, 在北京 and かな한글!", func(w string) { words = append(words, w) },
		func(r []rune) { runs = append(runs, string(r)) })
	if want := []string{"tess", "s", "2", "keys", "and"}; !slices.Equal(words, want) {
		t.Errorf("words = %q, want %q", words, want)
	}
	if want := []string{"在北京", "かな한글"}; !slices.Equal(runs, want) {
		t.Errorf("runs = %q, want %q", runs, want)
	}
}

func TestBigrams(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		run  string
		want []string
	}{
		{"京", []string{"京"}},
		{"北京", []string{"北京"}},
		{"在北京", []string{"在北", "北京"}},
	} {
		var got []string
		Bigrams([]rune(tt.run), func(s string) { got = append(got, s) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("Bigrams(%q) = %q, want %q", tt.run, got, tt.want)
		}
	}
}

func TestCJK(t *testing.T) {
	t.Parallel()
	for r, want := range map[rune]bool{'北': true, 'か': true, 'カ': true, '한': true, 'a': false, 'é': false, '1': false, '。': false} {
		if IsCJK(r) != want {
			t.Errorf("IsCJK(%q) = %v, want %v", r, !want, want)
		}
	}
	for r, want := range map[rune]bool{'北': true, 'か': false, '한': false, 'a': false, '。': false} {
		if IsHan(r) != want {
			t.Errorf("IsHan(%q) = %v, want %v", r, !want, want)
		}
	}
	if !HasCJK("Tess 在") || HasCJK("Tess, café") {
		t.Error("HasCJK does not agree with IsCJK")
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"shorter", 5, "shor…"},
		{"ab cd", 4, "ab…"}, // no space before the mark
		{"在北京的家", 3, "在北…"},
		{"anything", 0, ""},
		{"", 0, ""},
	} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestEllipsis(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"shorter", 5, "shor…"},
		{"ab cd", 4, "ab …"}, // the space stays: the cut is exact
		{"在北京的家", 3, "在北…"},
		{"anything", 1, "…"},
		{"anything", 0, "…"},
		{"", 0, ""},
	} {
		if got := Ellipsis(tt.in, tt.n); got != tt.want {
			t.Errorf("Ellipsis(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
