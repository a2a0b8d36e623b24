package memory

import (
	"math/rand/v2"
	"strings"
	"testing"

	"troupe/prompt"
)

// fits skips counting when the bytes alone are under the limits; that is
// sound only while no text counts more tokens than it has bytes.
func TestTokensNeverExceedBytes(t *testing.T) {
	if sideTokens() == nil {
		t.Fatal("the o200k codec did not load: fits would count every batch")
	}
	texts := []string{
		"", " ", "\n\n\n", "a", "The lantern keeper trims the wick.",
		"灯塔看守人修剪灯芯，海风从破窗里灌进来。", "🙂🙃🫠👩‍👩‍👧", "1234567890 3.14159 0xdeadbeef",
		"「你好」——他说。'Hello,' she said… ¿Qué? Ünïcödé", "\xff\xfe\xfd invalid \xc3\x28 utf-8 \xe2\x82",
		strings.Repeat("ab ", 1000), strings.Repeat("。", 500), strings.Repeat("\t \n", 300),
	}
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", "9", " ", "\n", "字", "の", "é", "🙂", "\xff", "'", "-", ".", "ß", "ΩΔ"}
	for range 2000 {
		var b strings.Builder
		for range r.IntN(200) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		if n := countTokens(text); n > len(text) {
			t.Fatalf("countTokens(%q) = %d, more than its %d bytes", text, n, len(text))
		}
	}
}

// fits says what counting every batch would say, on both sides of the
// limits and of the byte bound.
func TestFitsAgreesWithCounting(t *testing.T) {
	s := NewService(nil, nil, Config{ContextWindow: 2048, AnswerTokens: 512, BatchTokens: 900}, nil)
	exact := func(b batch) bool {
		return promptTokens(b.prompt) <= s.callLimit() && countTokens(b.material) <= s.batchLimit()
	}
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"the ", "keeper ", "灯塔", "看守人", "🙂", "storm ", "\n", "。"}
	say := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	var skipped, counted, fit, refused int
	for range 600 {
		material := say(r.IntN(900))
		b := batch{material: material, prompt: []prompt.Message{
			{Role: "system", Content: say(r.IntN(200))},
			{Role: "user", Content: say(r.IntN(100)) + material},
		}}
		got := s.fits(b)
		if want := exact(b); got != want {
			t.Fatalf("fits = %v, counting says %v (prompt %d tokens of %d, material %d of %d)", got, want,
				promptTokens(b.prompt), s.callLimit(), countTokens(b.material), s.batchLimit())
		}
		if promptBytes(b.prompt) <= s.callLimit() && len(b.material) <= s.batchLimit() {
			skipped++
		} else {
			counted++
		}
		if got {
			fit++
		} else {
			refused++
		}
	}
	if skipped == 0 || counted == 0 || fit == 0 || refused == 0 {
		t.Fatalf("the cases missed a side: %d under the byte bound, %d counted, %d fit, %d refused", skipped, counted, fit, refused)
	}
}
