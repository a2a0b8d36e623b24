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
	for _, tt := range []struct {
		r        rune
		cjk, han bool
	}{
		{'北', true, true}, {'か', true, false}, {'カ', true, false}, {'한', true, false},
		{'a', false, false}, {'é', false, false}, {'1', false, false}, {'。', false, false},
	} {
		if IsCJK(tt.r) != tt.cjk {
			t.Errorf("IsCJK(%q) = %v, want %v", tt.r, !tt.cjk, tt.cjk)
		}
		if IsHan(tt.r) != tt.han {
			t.Errorf("IsHan(%q) = %v, want %v", tt.r, !tt.han, tt.han)
		}
	}
	if !HasCJK("Tess 在") || HasCJK("Tess, café") {
		t.Error("HasCJK does not agree with IsCJK")
	}
}
