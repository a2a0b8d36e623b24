package web

import (
	"net/http"
	"slices"
	"strings"

	"troupe/handbook"
	"troupe/models"
	"troupe/recall"
)

// searchLimit bounds the index hits, and the handbook lines, a search
// shows.
const searchLimit = 100

// searchRoutes registers the search across a space's memory.
func (s *Server) searchRoutes() {
	s.handle("GET /search", false, s.search)
}

type searchHit struct {
	models.SpaceHit
	Belief bool
}

type handbookHit struct {
	CardID string
	Line   tagLine
}

type searchPage struct {
	Spaces   []string
	Space, Q string
	Searched bool
	Hits     []searchHit
	Handbook []handbookHit
}

func (searchPage) PageTitle() string { return "Search" }

// searchTerms are the query's index terms, as recall searches: its
// keywords and the cue terms of the names in it.
func searchTerms(q string) []string {
	var out []string
	for _, t := range append(recall.Keywords(q), recall.Cues(q)...) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// search looks a query up in a space's recall index (every character's
// perceptions and beliefs) and in its cards' handbooks, and links each
// hit to its chat and character.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	spaces, err := s.opt.Store.SpaceIDs(ctx)
	if err != nil {
		s.internal(w, r, "the spaces", err)
		return
	}
	q := r.URL.Query()
	pg := searchPage{Spaces: spaces, Space: q.Get("space"), Q: strings.TrimSpace(q.Get("q"))}
	if pg.Space == "" && len(spaces) == 1 {
		pg.Space = spaces[0]
	}
	terms := searchTerms(pg.Q)
	if pg.Q == "" || !slices.Contains(spaces, pg.Space) {
		s.render(w, r, http.StatusOK, "search", pg)
		return
	}
	pg.Searched = true
	hits, err := s.opt.Store.SearchSpace(ctx, pg.Space, terms, searchLimit)
	if err != nil {
		s.internal(w, r, "the search", err)
		return
	}
	for _, h := range hits {
		pg.Hits = append(pg.Hits, searchHit{SpaceHit: h, Belief: h.Kind == models.RecallBelief})
	}
	if pg.Handbook, err = s.searchHandbooks(r, pg.Space, terms); err != nil {
		s.internal(w, r, "the handbooks", err)
		return
	}
	s.render(w, r, http.StatusOK, "search", pg)
}

// searchHandbooks finds the handbook lines of the space's cards that hold
// any of terms, by the same keywords the index is written with.
func (s *Server) searchHandbooks(r *http.Request, space string, terms []string) ([]handbookHit, error) {
	hbs, err := s.opt.Store.Handbooks(r.Context(), space)
	if err != nil {
		return nil, err
	}
	var out []handbookHit
	var texts []string
	for _, hb := range hbs {
		for _, l := range strings.Split(hb.Content, "\n") {
			if len(out) == searchLimit {
				break
			}
			for _, t := range recall.Keywords(handbook.StripTags(l)) {
				if slices.Contains(terms, t) {
					out = append(out, handbookHit{CardID: hb.CardID, Line: tagLine{Segments: []segment{{Text: l}}}})
					texts = append(texts, l)
					break
				}
			}
		}
	}
	exists, err := s.opt.Store.ExistingChats(r.Context(), chatTags(texts...))
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Line = tagLines(texts[i], exists)[0]
	}
	return out, nil
}
