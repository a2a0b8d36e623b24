package prompt

import (
	"strings"
	"unicode/utf8"

	"troupe/text"
)

// ResidentMarker ends a resident summary cut for length.
var ResidentMarker = map[string]string{"en": "(… the rest is omitted for length)", "zh": "（……余下内容因篇幅从略）"}

// Budget is the per-turn envelope shared by the resident summary, the ledger
// snapshot and the roster.
type Budget struct {
	ResidentMax int
	Envelope    int
	MinUseful   int
}

// FitResident fits the resident summary into what the ledger and roster
// (others characters) leave of the envelope: whole if it fits; otherwise cut
// at the last paragraph (else line) boundary past MinUseful with a marker;
// left out when less than MinUseful would remain.
func FitResident(lang, body string, others int, b Budget) string {
	if strings.TrimSpace(body) == "" {
		return ""
	}
	allowance := min(b.ResidentMax, b.Envelope-others)
	if utf8.RuneCountInString(body) <= allowance {
		return body
	}
	if allowance < b.MinUseful {
		return ""
	}
	marker := ResidentMarker[langOr(lang)]
	room := allowance - utf8.RuneCountInString(marker) - 1
	if room < 1 {
		// Not even the marker fits (min_useful_chars below its length).
		return ""
	}
	head := text.CutRunes(body, room)
	cut := len(head)
	if i := strings.LastIndex(head, "\n\n"); i >= 0 && utf8.RuneCountInString(head[:i]) >= b.MinUseful {
		cut = i
	} else if i := strings.LastIndex(head, "\n"); i >= 0 && utf8.RuneCountInString(head[:i]) >= b.MinUseful {
		cut = i
	}
	return strings.TrimRight(head[:cut], " \t\n") + "\n" + marker
}
