package prompt

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"troupe/record"
)

// SceneInput is what the speaking character's scene is built from: the
// recorder's ledger, who is present, and what the character itself knows.
type SceneInput struct {
	Language string
	// Ledger is the character's own ledger snapshot (JSON): the chat's in
	// a one-card chat, its view's in a scene (models.MemberLedger); "" for
	// none.
	Ledger string
	// Character is the speaking character.
	Character string
	// Present are the characters in the scene (cast members and players).
	Present []string
	// Relationships are the character's own descriptions of others (to →
	// description); only those of characters present are shown.
	Relationships map[string]string
	// Known are the places and exits it knows.
	Known []string
	// Threads are the open threads the character perceived (its own
	// ledger's): the ledger's list never reaches the view by itself.
	Threads []string
	// CardText is the card's description and scenario: a present character
	// it names keeps what the card says of them instead of "stranger".
	CardText string
}

// Scene renders the scene as in.Character knows it, without a header (the
// prompt's turn block gives it one): its view of the ledger
// (record.Ledger.View: time, its place, who is there, what they visibly
// hold, threads, places and exits it knows) and its own relationships to
// those present. Other characters' relationships never appear. A present
// character without a recorded relationship is a stranger, unless the card
// names them (then what the card says stands). Empty when there is nothing
// to show.
func Scene(in SceneInput) string {
	var l record.Ledger
	if in.Ledger != "" {
		// A snapshot that is not the recorder's JSON shows as no ledger.
		_ = json.Unmarshal([]byte(in.Ledger), &l)
	}
	var parts []string
	if in.Ledger != "" || len(in.Known) > 0 || len(in.Threads) > 0 {
		if v := l.View(langOr(in.Language), record.ViewInput{Character: in.Character, Present: in.Present, Threads: in.Threads, Known: in.Known}); v != "" {
			parts = append(parts, v)
		}
	}
	w := sceneWords[langOr(in.Language)]
	var rels []string
	present := append([]string(nil), in.Present...)
	sort.Strings(present)
	here := l.PlaceOf(in.Character)
	for _, name := range present {
		if name == in.Character || l.PlaceOf(name) != here {
			continue
		}
		if d, ok := in.Relationships[name]; ok {
			rels = append(rels, fmt.Sprintf(w.rel, name, d))
		} else if !strings.Contains(in.CardText, name) {
			rels = append(rels, fmt.Sprintf(w.stranger, name))
		}
	}
	if len(rels) > 0 {
		parts = append(parts, w.relHeader+"\n"+strings.Join(rels, "\n"))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n")
}

// Envelope is the scene and the resident summary fitted together into the
// envelope they share: the scene goes whole (the recorder bounds the
// ledger), the resident gets what it leaves (cut at a paragraph, out below
// the minimum).
func Envelope(lang, scene, resident string, b Budget) (string, string) {
	return scene, FitResident(lang, resident, utf8.RuneCountInString(scene), b)
}

type sceneWordsT struct{ relHeader, rel, stranger string }

var sceneWords = map[string]sceneWordsT{
	"en": {relHeader: "How you see those here:",
		rel: "- %s: %s", stranger: "- %s: a stranger to you"},
	"zh": {relHeader: "你对在场之人的看法：",
		rel: "- %s：%s", stranger: "- %s：你不认识的人"},
}
