package recall

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Block renders the picked items as what the character remembers: each in
// its own words, with its story time and how it knows — saw, heard, was told
// by someone, guessed — and a belief with its confidence in words. Items
// come in story order, beliefs (what the character holds now) last, so that
// of two memories on one subject the newer is read last, as it happened.
// Scores never appear. It returns "" when nothing was picked.
func Block(lang string, items []Scored) string {
	w, ok := blockWords[lang]
	if !ok {
		w = blockWords["en"]
	}
	var picked []Scored
	for _, s := range items {
		if s.Picked {
			picked = append(picked, s)
		}
	}
	slices.SortStableFunc(picked, func(a, b Scored) int {
		return cmp.Or(cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)), cmp.Compare(a.StoryMinute, b.StoryMinute), cmp.Compare(a.Seq, b.Seq))
	})
	var b strings.Builder
	for _, s := range picked {
		if b.Len() == 0 {
			b.WriteString(w.header + "\n")
		}
		how := w.how[s.Mode]
		if s.Kind == Belief {
			how = w.belief[s.Confidence]
			if how == "" {
				how = w.belief["likely"]
			}
		} else if s.Mode == "told" && s.Via != "" {
			how = fmt.Sprintf(w.toldBy, s.Via)
		}
		if how == "" {
			how = w.how["saw"]
		}
		text := s.shown()
		if s.Faded {
			text += w.faded
		}
		if s.When != "" {
			fmt.Fprintf(&b, "- (%s) %s%s\n", s.When, how, text)
		} else {
			fmt.Fprintf(&b, "- %s%s\n", how, text)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func kindRank(k Kind) int {
	if k == Belief {
		return 1
	}
	return 0
}

// When renders a story time (day, minute of the day) as the block gives it.
func When(lang string, day, minute int) string {
	if day == 0 && minute == 0 {
		return ""
	}
	if lang == "zh" {
		return fmt.Sprintf("第%d天 %02d:%02d", day, minute/60, minute%60)
	}
	return fmt.Sprintf("day %d, %02d:%02d", day, minute/60, minute%60)
}

type blockWordsT struct {
	header, toldBy, faded string
	how, belief           map[string]string
}

var blockWords = map[string]blockWordsT{
	"en": {
		header: "[Remembered]",
		toldBy: "%s told you: ",
		faded:  " (the details have faded)",
		how:    map[string]string{"saw": "You saw: ", "heard": "You heard: ", "told": "You were told: ", "inferred": "You guessed: "},
		belief: map[string]string{"doubtful": "You suspect, without much certainty: ", "likely": "You believe: ", "sure": "You are sure: "},
	},
	"zh": {
		header: "【记忆】",
		toldBy: "%s告诉过你：",
		faded:  "（细节已经模糊）",
		how:    map[string]string{"saw": "你看到：", "heard": "你听到：", "told": "你听说：", "inferred": "你猜测："},
		belief: map[string]string{"doubtful": "你隐约怀疑：", "likely": "你认为：", "sure": "你确信："},
	},
}
