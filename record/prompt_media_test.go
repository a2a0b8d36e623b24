package record

import (
	"strings"
	"testing"
)

// The recorder's prompt says how to read shared pictures, voice notes and
// files only when the batch holds one, in either language: a scribe with
// a small window pays nothing for them otherwise.
func TestPromptExplainsMediaOnlyWhenShared(t *testing.T) {
	for _, tc := range []struct {
		lang, text string
		want       bool
	}{
		{"en", `Ada: "Look at this." [image: a red lantern on a quay]`, true},
		{"en", "[spoken] I light the lamp.", true},
		{"zh", "[Ada 发来一条语音]", true},
		{"en", "[Ada sent an image: map.png]", true},
		{"en", `Ada: "I light the lamp."`, false},
		{"zh", "苏砚点亮了灯。", false},
	} {
		in := Input{Cast: []CastMember{{Name: "Maren"}}, Events: []Event{{ID: "e1", Turn: 1, Actor: "Ada", Kind: "line", Text: tc.text, Present: []string{"Ada", "Maren"}}}}
		system := Prompt(tc.lang, in)[0].Content
		if got := strings.Contains(system, recorderWords[tc.lang].media); got != tc.want {
			t.Errorf("%s %q: media explained %v, want %v", tc.lang, tc.text, got, tc.want)
		}
	}
}
