package memory

import (
	"strings"
	"unicode/utf8"

	"troupe/handbook"
	"troupe/prompt"
)

// A turn injects the resident summary as a view of it (prompt.RenderResident);
// what is memory's is the stored format the view reads and the room the
// scribe's own lines may take when consolidation writes them.

// ResidentOf reads a stored resident summary (tags and all) as its view
// needs it: its lines without their provenance tags, and which of them a
// person wrote.
func ResidentOf(stored string) prompt.StoredResident {
	// StripTags keeps the lines: line i of its text is line i of stored.
	r := prompt.StoredResident{Lines: strings.Split(handbook.StripTags(stored), "\n")}
	for i, l := range strings.Split(stored, "\n") {
		if isResidentHandLine(l) {
			r.Hand = append(r.Hand, i)
		}
	}
	return r
}

// ResidentRoom is how many characters (tags left out) the scribe's own
// lines of a resident may have beside the lines a person wrote, hand: what
// those leave of limit, but never less than half of it. The scribe can
// always meet it, by writing less; a person's lines are cut from the
// injected view instead (prompt.RenderResident). A limit of 0 or less is none.
func ResidentRoom(limit int, hand []string) int {
	if limit <= 0 {
		return limit
	}
	room := limit
	for _, h := range hand {
		room -= utf8.RuneCountInString(h) + 1
	}
	return max(room, limit/2)
}

// isResidentHandLine reports whether a line of a stored resident is a
// person's: untagged and not one of the format's headings. The scribe's
// untagged lines are refused (ParseConsolidation), so in a stored resident
// only a person's lines are untagged.
func isResidentHandLine(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && len(handbook.Tags(t)) == 0 && !handbook.IsFormatHeading(t)
}
