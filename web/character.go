package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"troupe/belief"
	"troupe/models"
	"troupe/recall"
)

// Page sizes of a character's page: its newest perceptions, and beliefs.
const (
	perceptionPage = 100
	beliefPage     = 25
)

// characterRoutes registers a character's page and its two deletes, each
// a form that shows what goes and asks again before it goes.
func (s *Server) characterRoutes() {
	s.handle("GET /character/{space}/{name}", false, s.characterPage)
	s.handle("POST /character/{space}/{name}/belief/{id}/delete", true, s.deleteBelief)
	s.handle("POST /character/{space}/{name}/perception/{id}/delete", true, s.deletePerception)
}

func characterPath(space, name string) string {
	return "/character/" + url.PathEscape(space) + "/" + url.PathEscape(name)
}

type perceptionRow struct {
	models.Perception
	When string
	// Retention is how much detail is left (percent, default fading);
	// State says what recall makes of it.
	Retention int
	State     string
}

type evidenceRow struct {
	Perception string
	Turn       int64
	Text       string
	ChatID     string
	// Known: the perception is still stored.
	Known bool
}

type beliefRow struct {
	models.BeliefView
	Row     models.Belief
	For     []evidenceRow
	Against []evidenceRow
	Checks  []models.BeliefCheck
	// Steps is its confidence history: where it was formed and each turn
	// the confidence moved, and by what.
	Steps []confidenceStep
}

// confidenceStep is a turn where a belief's confidence was set: Move is
// "formed", "raised", "lowered" or "kept" (the first step a history holds
// when it began after the belief was formed), By what set it.
type confidenceStep struct {
	Turn       int64
	At         time.Time
	Confidence string
	Move, By   string
}

// confidenceSteps keeps the steps of changes where the confidence moved
// (rewrites that kept it are left out), oldest first.
func confidenceSteps(changes []models.BeliefChange) []confidenceStep {
	var out []confidenceStep
	last := -1
	for _, c := range changes {
		move := "kept"
		switch {
		case c.Why == models.ChangeFormed:
			move = "formed"
		case last < 0:
		case c.Confidence > last:
			move = "raised"
		case c.Confidence < last:
			move = "lowered"
		default:
			continue
		}
		by := map[string]string{models.ChangeFormed: "a reflection", models.ChangeReflection: "a reflection", models.ChangeCheck: "a belief check"}[c.Why]
		out = append(out, confidenceStep{Turn: c.Seq, At: c.CreatedAt, Confidence: belief.Confidence(c.Confidence).String(), Move: move, By: by})
		last = c.Confidence
	}
	return out
}

type characterPage struct {
	Space, Name, Path string
	Character         models.Character
	Perceptions       []perceptionRow
	PerceptionTotal   int64
	// Older is the link to the next older page ("" at the oldest); Newest
	// is set when this is not the newest page.
	Older, Newest string
	Beliefs       []beliefRow
	BeliefTotal   int64
	BeliefFrom    int
	NextBeliefs   string
	PrevBeliefs   string
	models.CharacterRecord
	// Done says what a delete just took.
	Done string
}

func (p characterPage) PageTitle() string { return p.Name + " in " + p.Space }

// storyWhen is a story time as words.
func storyWhen(day, minute int) string {
	return fmt.Sprintf("day %d, %02d:%02d", day, minute/60, minute%60)
}

// fading tells how recall sees a perception, with the default fading, on
// its chat's story clock now.
func fading(p models.Perception, now int64) (int, string) {
	it := recall.Item{Importance: p.Importance, StoryMinute: int64(p.Day)*recall.MinutesPerDay + int64(p.Minute), Recalls: p.RecallCount}
	if p.FoldedInto != nil {
		it.FoldedInto = *p.FoldedInto
	}
	ret := recall.Retention(it, now, recall.DefaultParams().Fading)
	state := "whole"
	switch {
	case ret < recall.GoneBelow && p.Importance < recall.KeptImportance:
		state = "faded past recall"
	case ret < recall.GistBelow && p.Gist != "":
		state = "recalled as its gist"
	case ret < recall.GistBelow:
		state = "faded (no gist)"
	}
	return int(ret*100 + 0.5), state
}

func (s *Server) characterPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	space, name := r.PathValue("space"), r.PathValue("name")
	ch, err := s.opt.Store.CharacterOf(ctx, space, name)
	if errors.Is(err, models.ErrNotFound) {
		s.notFound(w, r)
		return
	}
	if err != nil {
		s.internal(w, r, "the character", err)
		return
	}
	q := r.URL.Query()
	pg := characterPage{Space: space, Name: name, Path: characterPath(space, name), Character: ch}
	switch q.Get("done") {
	case "belief":
		pg.Done = "The belief was deleted; the perceptions it cited are new again and the next reflection reads them."
	case "perception":
		pg.Done = "The perception was deleted, with the beliefs that cited it; the other perceptions those cited are new again."
	}
	var beforeSeq int64
	beforeID := ""
	if b := q.Get("before"); b != "" {
		seq, id, ok := strings.Cut(b, ":")
		n, err := strconv.ParseInt(seq, 10, 64)
		if !ok || err != nil || id == "" {
			s.fail(w, r, http.StatusBadRequest, "The page's place in the story could not be read.")
			return
		}
		beforeSeq, beforeID = n, id
		pg.Newest = pg.Path
	}
	perc, err := s.opt.Store.CharacterPerceptions(ctx, space, name, beforeSeq, beforeID, perceptionPage)
	if err != nil {
		s.internal(w, r, "the perceptions", err)
		return
	}
	pg.PerceptionTotal = perc.Total
	var chats []string
	for _, p := range perc.Perceptions {
		chats = append(chats, p.ChatID)
	}
	now, err := s.opt.Store.StoryNow(ctx, chats)
	if err != nil {
		s.internal(w, r, "the story time", err)
		return
	}
	for _, p := range perc.Perceptions {
		ret, state := fading(p, now[p.ChatID])
		pg.Perceptions = append(pg.Perceptions, perceptionRow{Perception: p, When: storyWhen(p.Day, p.Minute), Retention: ret, State: state})
	}
	if perc.More {
		last := perc.Perceptions[len(perc.Perceptions)-1]
		pg.Older = pg.Path + "?before=" + url.QueryEscape(strconv.FormatInt(last.Seq, 10)+":"+last.ID) + "#perceptions"
	}
	from, _ := strconv.Atoi(q.Get("beliefs"))
	from = max(from, 0)
	bp, err := s.opt.Store.CharacterBeliefs(ctx, space, name, from, beliefPage)
	if err != nil {
		s.internal(w, r, "the beliefs", err)
		return
	}
	pg.BeliefTotal, pg.BeliefFrom = bp.Total, from
	if int64(from+beliefPage) < bp.Total {
		pg.NextBeliefs = pg.Path + "?beliefs=" + strconv.Itoa(from+beliefPage) + "#beliefs"
	}
	if from > 0 {
		pg.PrevBeliefs = pg.Path + "?beliefs=" + strconv.Itoa(max(from-beliefPage, 0)) + "#beliefs"
	}
	var cited []string
	for _, b := range bp.Beliefs {
		for _, e := range b.Evidence {
			cited = append(cited, e.Perception)
		}
	}
	texts, err := s.opt.Store.PerceptionsByID(ctx, cited)
	if err != nil {
		s.internal(w, r, "the evidence", err)
		return
	}
	for _, b := range bp.Beliefs {
		row := beliefRow{BeliefView: b, Row: bp.Rows[b.ID], Checks: bp.Checks[b.ID], Steps: confidenceSteps(bp.Changes[b.ID])}
		for _, e := range b.Evidence {
			p, known := texts[e.Perception]
			ev := evidenceRow{Perception: e.Perception, Turn: e.Turn, Text: p.Text, ChatID: p.ChatID, Known: known}
			if e.Stance == "contradicts" {
				row.Against = append(row.Against, ev)
			} else {
				row.For = append(row.For, ev)
			}
		}
		pg.Beliefs = append(pg.Beliefs, row)
	}
	if pg.CharacterRecord, err = s.opt.Store.CharacterRecord(ctx, space, name); err != nil {
		s.internal(w, r, "the record", err)
		return
	}
	s.render(w, r, http.StatusOK, "character", pg)
}

// confirmPage asks once more before a delete.
type confirmPage struct {
	Action, Back string
	What, Text   string
	Cascade      []string
}

func (confirmPage) PageTitle() string { return "Delete?" }

// deleteBelief deletes a belief as `/belief forget` and `troupe memory
// belief delete` do (store.DeleteBelief: the perceptions it cited become
// new again). Without confirm=yes it shows what goes and asks again.
func (s *Server) deleteBelief(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	space, name, id := r.PathValue("space"), r.PathValue("name"), r.PathValue("id")
	back := characterPath(space, name)
	bs, err := s.opt.Store.BeliefsByID(ctx, []string{id})
	if err != nil {
		s.internal(w, r, "the belief", err)
		return
	}
	b, ok := bs[id]
	if !ok || b.SpaceID != space || b.Character != name {
		s.notFound(w, r)
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		s.render(w, r, http.StatusOK, "confirm", confirmPage{Action: r.URL.Path, Back: back + "#belief-" + id, What: "this belief of " + name, Text: b.Text,
			Cascade: []string{"Its evidence links and check marks go with it.", "The perceptions it cited become new again: the next reflection reads them."}})
		return
	}
	if _, err := s.opt.Store.DeleteBelief(ctx, id); err != nil && !errors.Is(err, models.ErrNotFound) {
		s.internal(w, r, "the delete", err)
		return
	}
	http.Redirect(w, r, back+"?done=belief#beliefs", http.StatusSeeOther)
}

// deletePerception deletes a perception and what depends only on it
// (store.DeletePerception). Without confirm=yes it shows what goes and
// asks again.
func (s *Server) deletePerception(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	space, name, id := r.PathValue("space"), r.PathValue("name"), r.PathValue("id")
	back := characterPath(space, name)
	ps, err := s.opt.Store.PerceptionsByID(ctx, []string{id})
	if err != nil {
		s.internal(w, r, "the perception", err)
		return
	}
	p, ok := ps[id]
	if !ok || p.SpaceID != space || p.Character != name {
		s.notFound(w, r)
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		s.render(w, r, http.StatusOK, "confirm", confirmPage{Action: r.URL.Path, Back: back + "#perception-" + id, What: "this perception of " + name, Text: p.Text,
			Cascade: []string{"Every belief citing it, for or against, goes too (and any belief merged from one); the other perceptions those beliefs cited become new again.",
				"Its recall index entries and vector go; recall blocks and diagnostics that show it are dropped.", "The event itself stays, and so do other characters' perceptions of it."}})
		return
	}
	if _, _, err := s.opt.Store.DeletePerception(ctx, id); err != nil && !errors.Is(err, models.ErrNotFound) {
		s.internal(w, r, "the delete", err)
		return
	}
	http.Redirect(w, r, back+"?done=perception#perceptions", http.StatusSeeOther)
}
