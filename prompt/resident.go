package prompt

import (
	"strings"
	"unicode/utf8"

	"troupe/text"
)

// The resident summary is stored whole and injected as a view of it: the
// budget (resident_max_chars, and what the scene leaves of the envelope)
// bounds what a turn carries, never what consolidation may install. A
// person's lines (troupe memory edit) are kept however long they are, so a
// budget that refused them would refuse every consolidation after the edit.
//
// What the view leaves out, first to last:
//  1. the lines a person wrote, the last one first. The scribe's own lines
//     are held at consolidation to what those leave of the budget, never to
//     less than half of it (memory.ResidentRoom), so they fit the budget alone: only
//     a person's lines can run over it, and the scribe's carry what every
//     chat taught the character. To keep a line of one's own in view, put it
//     higher up; the whole file stays stored and `troupe memory show`
//     prints it. The line whose leaving makes room is cut inside instead
//     when what is left is under min_useful_chars and a start of the line
//     worth reading fits.
//  2. when a scene leaves less than the budget, the rest from its end, cut
//     at a paragraph or line (FitResident).
//
// Either way the view ends with ResidentMarker, and /memory says how many
// lines it left out.

// ResidentView is a stored resident summary as a turn injects it.
type ResidentView struct {
	// Text is what a turn injects: tags stripped, fitted to Allowance; ""
	// when there is no resident or it is left out.
	Text string
	// Cut are the lines of the stored resident (tags stripped) the view
	// leaves out or cuts inside, in their order; HandCut counts those a
	// person wrote.
	Cut     []string
	HandCut int
	// Allowance is how many characters the view may have.
	Allowance int
}

// minPartialLine is the least of a person's line the view keeps when it
// cuts the line inside rather than leaving it out.
const minPartialLine = 40

// StoredResident is a stored resident summary as its view needs it: its
// lines with the provenance tags stripped, line i of the stored text
// being Lines[i], and which of them a person wrote. The stored format is
// memory's, which reads one (memory.ResidentOf); the zero value is no
// resident.
type StoredResident struct {
	Lines []string
	// Hand are the indexes in Lines of the lines a person wrote, in
	// order.
	Hand []int
}

// RenderResident renders a stored resident summary as a turn injects it
// when others characters (the scene) take their part of the envelope:
// whole when it fits, else cut as the comment at the top of this file
// says.
func RenderResident(lang string, stored StoredResident, others int, b Budget) ResidentView {
	v := ResidentView{Allowance: min(b.ResidentMax, b.Envelope-others)}
	lines, hand := stored.Lines, stored.Hand
	body := strings.Join(lines, "\n")
	if strings.TrimSpace(body) == "" {
		return v
	}
	if utf8.RuneCountInString(body) <= v.Allowance {
		v.Text = body
		return v
	}
	if v.Allowance < b.MinUseful {
		v.Cut = nonBlank(lines)
		v.HandCut = len(hand)
		return v
	}
	marker := ResidentMarker[langOr(lang)]
	room := v.Allowance - utf8.RuneCountInString(marker) - 1
	size := utf8.RuneCountInString(body)
	drop, last := map[int]bool{}, -1
	for k := len(hand) - 1; k >= 0 && size > room; k-- {
		last = hand[k]
		drop[last] = true
		size -= utf8.RuneCountInString(lines[last]) + 1
	}
	kept := make([]string, 0, len(lines))
	for i, l := range lines {
		if !drop[i] {
			kept = append(kept, l)
			continue
		}
		t := strings.TrimSpace(l)
		// As FitResident cuts inside a line only when no boundary leaves
		// MinUseful: the line whose leaving made room is cut inside
		// instead when the rest is under that (a person's one long
		// paragraph), and a start of it worth reading fits.
		if left := room - size - 1; i == last && size < max(b.MinUseful, minPartialLine) && left >= minPartialLine {
			kept = append(kept, strings.TrimRight(text.CutRunes(t, left-1), " \t")+"…")
			size += left + 1
		}
		v.Cut = append(v.Cut, t)
	}
	v.HandCut = len(v.Cut)
	rest := text.CollapseBlankLines(strings.Join(kept, "\n"))
	if rest == "" {
		return v
	}
	if utf8.RuneCountInString(rest) <= room {
		v.Text = rest + "\n" + marker
		return v
	}
	// The scribe's lines alone are over what the scene leaves: the rest
	// is cut from its end, as any text is, marked even if it would fit
	// without the marker (a person's lines are gone).
	cut := b
	cut.ResidentMax = min(v.Allowance, utf8.RuneCountInString(rest)-1)
	v.Text = FitResident(lang, rest, others, cut)
	restLines := strings.Split(rest, "\n")
	keptLines := 0
	if v.Text != "" {
		body := strings.Split(strings.TrimSuffix(v.Text, "\n"+marker), "\n")
		keptLines = len(body)
		if body[keptLines-1] != restLines[keptLines-1] {
			keptLines-- // that line is cut inside
		}
	}
	v.Cut = inOrder(lines, append(v.Cut, nonBlank(restLines[keptLines:])...))
	return v
}

// nonBlank returns the lines that are not blank, trimmed.
func nonBlank(lines []string) []string {
	var out []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// inOrder returns some lines of all in the order they stand in all.
func inOrder(all, some []string) []string {
	want := map[string]int{}
	for _, l := range some {
		want[l]++
	}
	out := make([]string, 0, len(some))
	for _, l := range all {
		if t := strings.TrimSpace(l); want[t] > 0 {
			want[t]--
			out = append(out, t)
		}
	}
	return out
}
