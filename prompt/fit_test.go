package prompt_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/prompt"
	"troupe/prompt/prompttest"
)

// runeCount counts a prompt as its characters: enough to test the fitting.
func runeCount(msgs []prompt.Message) int {
	n := 0
	for _, m := range msgs {
		n += utf8.RuneCountInString(m.Content)
	}
	return n
}

func TestFitPrompt(t *testing.T) {
	t.Parallel()
	// Ten answered beats after a greeting, then the message to answer.
	history := append(prompttest.Story(10, 100, true), prompt.Turn{ID: "n", Role: prompt.RoleUser, Content: strings.Repeat("n", 100)})
	base := prompt.AssembleInput{Language: "en", System: "S", History: history}
	bare := runeCount(prompt.Assemble(base.Bare()))
	full := runeCount(prompt.Assemble(base))
	withSummary := base
	withSummary.Summary = strings.Repeat("s", 300)
	withSummary.Lore = &prompt.Lore{System: "S\n" + strings.Repeat("l", 300)}
	tests := []struct {
		name  string
		in    prompt.AssembleInput
		limit int
		// first is the id of the first history message sent.
		first     string
		shortened bool
		summary   bool
		err       error
	}{
		{"fits: nothing left out", base, full, "g", false, false, nil},
		{"one over: the greeting goes", base, full - 1, "u0", false, false, nil},
		{"old beats go, oldest first", base, full - 800, "u4", false, false, nil},
		{"old beats go down to the last keep", base, full - 1100, "u5", false, false, nil},
		{"then the last keep beats, message by message", base, full - 1101, "a5", true, false, nil},
		{"only the last message is left", base, bare, "n", true, false, nil},
		{"lore and summary go before the last message", withSummary, bare + 100, "n", true, false, nil},
		{"the last message alone is too long", base, bare - 1, "", false, false, prompt.ErrNoFit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := prompt.FitPrompt(tt.in, 6, runeCount, tt.limit)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if f.Tokens > tt.limit || f.Tokens != runeCount(f.Messages) {
				t.Errorf("counted %d (really %d), limit %d", f.Tokens, runeCount(f.Messages), tt.limit)
			}
			if f.Shortened != tt.shortened {
				t.Errorf("shortened = %v, want %v", f.Shortened, tt.shortened)
			}
			sent := f.Messages[1:]
			if strings.Contains(f.Messages[0].Content, "sss") != tt.summary {
				t.Errorf("summary sent = %v, want %v", !tt.summary, tt.summary)
			}
			firstID := tt.in.History[f.Dropped].ID
			if firstID != tt.first {
				t.Errorf("first message sent %s, want %s", firstID, tt.first)
			}
			if want := len(tt.in.History) - f.Dropped; len(sent) != want {
				t.Errorf("sent %d history messages, want %d", len(sent), want)
			}
			if last := sent[len(sent)-1].Content; last != tt.in.History[len(tt.in.History)-1].Content {
				t.Errorf("the last message was not sent")
			}
			// As little as possible went: from the cut before (a beat
			// earlier, or a message earlier past the last keep beats) the
			// prompt would not fit.
			if f.Dropped > 0 && f.Dropped < len(tt.in.History)-1 {
				prev := f.Dropped - 1
				if !f.Shortened {
					prev = 0
					for _, s := range prompt.BeatStarts(tt.in.History) {
						if s < f.Dropped {
							prev = s
						}
					}
				}
				in := tt.in
				in.History = in.History[prev:]
				if runeCount(prompt.Assemble(in)) <= tt.limit {
					t.Errorf("dropped %d messages; %d would have fit", f.Dropped, prev)
				}
			}
		})
	}
}

// BenchmarkFitPromptPile fits a pile of 500 unanswered 1,000-character
// messages into a 2,048-token window, counting as the pipeline does: the
// estimate, and the o200k tokenizer near the limit. The search costs
// O(log n) counts.
func BenchmarkFitPromptPile(b *testing.B) {
	history := prompttest.Story(5, 200, true)
	for i := 0; i < 500; i++ {
		history = append(history, prompt.Turn{ID: "p", Role: prompt.RoleUser, Content: strings.Repeat("The lamp swings in the wind. ", 35)})
	}
	in := prompt.AssembleInput{Language: "en", System: "You are Maren.", History: history}
	est := prompt.NewEstimator()
	const limit = 1706
	count := func(msgs []prompt.Message) int {
		n := est.Estimate("chat", msgs)
		if n <= limit && float64(n)*1.25 > limit*1.05 {
			n = max(n, est.Precise("chat", msgs))
		}
		return n
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := prompt.FitPrompt(in, 6, count, limit); err != nil {
			b.Fatal(err)
		}
	}
}
