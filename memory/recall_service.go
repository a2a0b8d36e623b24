package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"troupe/config"
	"troupe/models"
	"troupe/recall"
	"troupe/text"
)

// RecallStore is what recall reads of the store; *models.Store satisfies
// it.
type RecallStore interface {
	RecallHits(ctx context.Context, q models.RecallSearch) ([]recall.Hit, error)
	RecallItems(ctx context.Context, q models.RecallLoad) (models.RecallItems, error)
}

// RecallConfig is recall's part of the configuration.
type RecallConfig struct {
	// Candidates is how many found items are loaded and scored.
	Candidates int
	Params     recall.Params
	// Vectors, when set, adds the items most similar to the new messages
	// (recall.embeddings); Rerank re-orders the candidates (recall.rerank).
	Vectors *Vectors
	Rerank  Reranker
}

// perTermFactor sets how many index entries a term may fetch, as a multiple
// of the candidates: enough that a rare word finds all its items, while a
// common one costs a bounded read.
const perTermFactor = 2

// RecallConfigFrom builds recall's configuration from the config file's.
func RecallConfigFrom(r config.Recall, m config.Memory) RecallConfig {
	p := recall.DefaultParams()
	p.MaxItems, p.MaxChars = r.MaxItems, r.MaxChars
	p.Weights = recall.Weights{Importance: r.Weights.Importance, Relevance: r.Weights.Relevance, Recency: r.Weights.Recency, Retention: r.Weights.Retention}
	p.Fading = recall.Fading{On: m.Fading, FoldedFade: m.FoldedFade}
	return RecallConfig{Candidates: r.Candidates, Params: p}
}

// RecallInput is one turn's recall for its speaking character.
type RecallInput struct {
	Language           string
	SpaceID, Character string
	// Aliases are the other names the character goes by (its card's
	// nickname): like its own name, no cue for its own memories
	// (recall.Query).
	Aliases []string
	// ChatID and HeadID: of the turn's chat only the current branch counts.
	ChatID, HeadID string
	// New are the new messages' texts: their names and words are the cues.
	New []string
	// InPrompt are the ids of the messages the prompt has verbatim.
	InPrompt map[string]bool
	// Kept are the ids of the items that kept recall blocks earlier in the
	// prompt show: still picked when they are among the best, but not
	// shown twice.
	Kept map[string]bool
}

// Recalled is what a turn recalls: the block for the prompt, every
// candidate scored (for the inspector) and the ids picked.
type Recalled struct {
	// Block shows the picked items that no kept block shows yet; Shown
	// are their ids.
	Block                string
	Shown                []string
	Scored               []recall.Scored
	Perceptions, Beliefs []string
	// Skipped says which optional parts (vector, rerank) were left out of
	// this recall and why: the turn went on without them.
	Skipped []string
}

// RecallFound is what recall found for a turn, before the pick: the
// candidates with their relevance, and the story's time now.
type RecallFound struct {
	cands   []recall.Candidate
	now     int64
	skipped []string
	// ranked is what the search ranked before the load: ids and
	// relevance only, for RecallAgain.
	ranked []recall.Ranked
}

// Ranked is what the search ranked: the ids of its candidates with their
// relevance and how they were found, no text. RecallAgain loads them
// again for a later turn.
func (f RecallFound) Ranked() []recall.Ranked { return f.ranked }

// FindRecall finds the speaking character's own perceptions and beliefs
// that bear on the new messages, by the names and words they share with
// them (an index search bounded per term, then one load), by similarity
// and rerank when those are set. Three or four queries, whatever the
// story's length. It reads only in's character, chat, head and new
// messages, so a turn runs it while it reads the rest of its prompt, and
// gives the prompt's messages and kept blocks to Pick.
func FindRecall(ctx context.Context, st RecallStore, cfg RecallConfig, in RecallInput) (RecallFound, error) {
	text := strings.Join(in.New, "\n")
	words, cues := recall.Query(text, append([]string{in.Character}, in.Aliases...))
	terms := append(append([]string(nil), words...), cues...)
	if len(terms) == 0 {
		return RecallFound{}, nil
	}
	var found RecallFound
	vec := cfg.startVectors(ctx, in, text)
	perTerm := max(cfg.Candidates*perTermFactor, 1)
	hits, err := st.RecallHits(ctx, models.RecallSearch{SpaceID: in.SpaceID, Character: in.Character, Terms: terms, PerTerm: perTerm})
	if err != nil {
		if vec != nil {
			vec.cancel()
		}
		return RecallFound{}, err
	}
	ranked := recall.Rank(hits, words, perTerm, cfg.Candidates)
	ranked = vec.merge(ranked, &found.skipped)
	if len(ranked) == 0 {
		return found, nil
	}
	items, err := loadRanked(ctx, st, in, ranked)
	if err != nil {
		return RecallFound{}, err
	}
	cfg.recheckVectors(ctx, in, ranked, items)
	found.ranked = ranked
	found.cands = candidates(in, ranked, items)
	found.cands = cfg.rerank(ctx, text, found.cands, &found.skipped)
	found.now = items.Now
	return found, nil
}

// RecallAgain loads what an earlier search ranked (RecallFound.Ranked)
// for in: one query by id, with every check of a search's load (the
// character's own items, live, on in's branch), so an item forgotten or
// taken off the branch since is not brought back. Neither vectors nor
// rerank run: it is the turn's cheap recall when the store is busy.
func RecallAgain(ctx context.Context, st RecallStore, in RecallInput, ranked []recall.Ranked) (RecallFound, error) {
	if len(ranked) == 0 {
		return RecallFound{}, nil
	}
	items, err := loadRanked(ctx, st, in, ranked)
	if err != nil {
		return RecallFound{}, err
	}
	return RecallFound{ranked: ranked, cands: candidates(in, ranked, items), now: items.Now}, nil
}

// loadRanked loads the ranked items that are in's character's own and
// on its branch.
func loadRanked(ctx context.Context, st RecallStore, in RecallInput, ranked []recall.Ranked) (models.RecallItems, error) {
	load := models.RecallLoad{SpaceID: in.SpaceID, Character: in.Character, ChatID: in.ChatID, HeadID: in.HeadID}
	for _, r := range ranked {
		if r.Kind == recall.Belief {
			load.Beliefs = append(load.Beliefs, r.ID)
		} else {
			load.Perceptions = append(load.Perceptions, r.ID)
		}
	}
	return st.RecallItems(ctx, load)
}

// candidates pairs the loaded items with their ranking.
func candidates(in RecallInput, ranked []recall.Ranked, items models.RecallItems) []recall.Candidate {
	byID := make(map[string]recall.Ranked, len(ranked))
	for _, r := range ranked {
		byID[r.ID] = r
	}
	cands := make([]recall.Candidate, 0, len(items.Items))
	for _, it := range items.Items {
		if it.Kind == recall.Perception {
			it.When = recall.When(in.Language, int(it.StoryMinute/recall.MinutesPerDay), int(it.StoryMinute%recall.MinutesPerDay))
		}
		r := byID[it.ID]
		cands = append(cands, recall.Candidate{Item: it, Sources: r.Sources, Relevance: r.Relevance})
	}
	return cands
}

// Pick scores the found candidates, picks what to recall (recall.Select:
// none whose message the prompt has verbatim, in.InPrompt) and renders the
// block of those that no kept block shows yet (in.Kept).
func (f RecallFound) Pick(cfg RecallConfig, in RecallInput) Recalled {
	out := Recalled{Skipped: f.skipped}
	if len(f.cands) == 0 {
		return out
	}
	p := cfg.Params
	p.Now, p.InPrompt, p.Said, p.Shown = f.now, in.InPrompt, in.New, in.Kept
	out.Scored = recall.Select(f.cands, p)
	shown := make([]recall.Scored, 0, len(out.Scored))
	for _, s := range out.Scored {
		if !s.Picked {
			continue
		}
		if !in.Kept[s.ID] {
			shown = append(shown, s)
			out.Shown = append(out.Shown, s.ID)
		}
		if s.Kind == recall.Belief {
			out.Beliefs = append(out.Beliefs, s.ID)
		} else {
			out.Perceptions = append(out.Perceptions, s.ID)
		}
	}
	out.Block = recall.Block(in.Language, shown)
	return out
}

// RecallReport is the inspector's record of one turn's recall: every
// candidate with its score by component, whether it was picked and why,
// how it was found, and whether it faded to its gist. It never reaches the
// model.
type RecallReport struct {
	Character string       `json:"character"`
	Items     []ReportItem `json:"items"`
}

// ReportItem is one candidate in a RecallReport.
type ReportItem struct {
	ID         string   `json:"id"`
	Kind       string   `json:"kind"`
	Text       string   `json:"text"`
	Sources    []string `json:"sources,omitempty"`
	Importance float64  `json:"importance"`
	Relevance  float64  `json:"relevance"`
	Recency    float64  `json:"recency"`
	Retention  float64  `json:"retention"`
	Total      float64  `json:"total"`
	Picked     bool     `json:"picked"`
	Faded      bool     `json:"faded,omitempty"`
	Why        string   `json:"why"`
}

// Report turns a recall into its inspector record.
func (r Recalled) Report(character string) RecallReport {
	rep := RecallReport{Character: character}
	for _, s := range r.Scored {
		it := ReportItem{ID: s.ID, Kind: string(s.Kind), Text: s.Text, Importance: s.Components.Importance, Relevance: s.Components.Relevance,
			Recency: s.Components.Recency, Retention: s.Components.Retention, Total: s.Total, Picked: s.Picked, Faded: s.Faded, Why: s.Why}
		for _, src := range s.Sources {
			it.Sources = append(it.Sources, string(src))
		}
		rep.Items = append(rep.Items, it)
	}
	return rep
}

// JSON is the report as stored.
func (r RecallReport) JSON() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// ParseRecallReport reads a stored report.
func ParseRecallReport(data string) (RecallReport, error) {
	var r RecallReport
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return r, fmt.Errorf("memory: recall report: %w", err)
	}
	return r, nil
}

// Text renders a report for a person: one line per candidate, picked ones
// first, with its scores by component.
func (r RecallReport) Text(lang string) string {
	var b strings.Builder
	picked, not := "picked", "not picked"
	if lang == "zh" {
		picked, not = "选中", "未选"
	}
	fmt.Fprintf(&b, "%s:\n", r.Character)
	for _, it := range r.Items {
		state := not
		if it.Picked {
			state = picked
		}
		src := strings.Join(it.Sources, "+")
		if src == "" {
			src = "-"
		}
		faded := ""
		if it.Faded {
			faded = " (gist)"
		}
		fmt.Fprintf(&b, "- [%s %s] %s%s — %s (%s); total %.2f = importance %.2f, relevance %.2f, recency %.2f, retention %.2f\n",
			it.Kind, it.ID, text.Clip(it.Text, 80), faded, state, it.Why+", "+src, it.Total, it.Importance, it.Relevance, it.Recency, it.Retention)
	}
	return strings.TrimRight(b.String(), "\n")
}
