package cards

import "encoding/json"

// MarshalJSON writes the book as a V2/V3 character_book: the JSON it was
// read from when there is one (so that fields troupe does not use survive an
// export), else the entries array with SillyTavern's fields under
// extensions.
func (b *Book) MarshalJSON() ([]byte, error) {
	if len(b.raw) > 0 {
		return b.raw, nil
	}
	type ext struct {
		Position            Position `json:"position"`
		Depth               int      `json:"depth"`
		Role                int      `json:"role"`
		SelectiveLogic      Logic    `json:"selectiveLogic"`
		Probability         float64  `json:"probability"`
		UseProbability      bool     `json:"useProbability"`
		Group               string   `json:"group"`
		GroupWeight         float64  `json:"group_weight"`
		GroupOverride       bool     `json:"group_override"`
		Sticky              int      `json:"sticky"`
		Cooldown            int      `json:"cooldown"`
		Delay               int      `json:"delay"`
		ExcludeRecursion    bool     `json:"exclude_recursion"`
		PreventRecursion    bool     `json:"prevent_recursion"`
		DelayUntilRecursion bool     `json:"delay_until_recursion"`
		ScanDepth           *int     `json:"scan_depth"`
		CaseSensitive       *bool    `json:"case_sensitive"`
		MatchWholeWords     *bool    `json:"match_whole_words"`
	}
	type entry struct {
		ID             string   `json:"id"`
		Keys           []string `json:"keys"`
		SecondaryKeys  []string `json:"secondary_keys"`
		Comment        string   `json:"comment"`
		Content        string   `json:"content"`
		Constant       bool     `json:"constant"`
		Selective      bool     `json:"selective"`
		InsertionOrder float64  `json:"insertion_order"`
		Priority       float64  `json:"priority"`
		Enabled        bool     `json:"enabled"`
		Position       string   `json:"position"`
		Extensions     ext      `json:"extensions"`
	}
	out := struct {
		Name        string   `json:"name,omitempty"`
		ScanDepth   int      `json:"scan_depth,omitempty"`
		TokenBudget int      `json:"token_budget,omitempty"`
		Recursive   bool     `json:"recursive_scanning"`
		Extensions  struct{} `json:"extensions"`
		Entries     []entry  `json:"entries"`
	}{Name: b.Name, ScanDepth: b.ScanDepth, TokenBudget: b.TokenBudget, Recursive: b.Recursive, Entries: []entry{}}
	roles := map[string]int{RoleSystem: 0, RoleUser: 1, RoleAssistant: 2}
	for _, e := range b.Entries {
		pos := "before_char"
		if e.Position == AfterChar {
			pos = "after_char"
		}
		x := ext{Position: e.Position, Depth: e.Depth, Role: roles[e.Role], SelectiveLogic: e.Logic,
			Probability: e.Probability, UseProbability: e.UseProbability, GroupWeight: e.GroupWeight, GroupOverride: e.GroupOverride,
			Sticky: e.Sticky, Cooldown: e.Cooldown, Delay: e.Delay, ExcludeRecursion: e.ExcludeRecursion,
			PreventRecursion: e.PreventRecursion, DelayUntilRecursion: e.DelayUntilRecursion,
			CaseSensitive: e.CaseSensitive, MatchWholeWords: e.MatchWholeWords}
		for i, g := range e.Groups {
			if i > 0 {
				x.Group += ","
			}
			x.Group += g
		}
		if e.ScanDepth >= 0 {
			d := e.ScanDepth
			x.ScanDepth = &d
		}
		content := e.Content
		if e.Activate {
			content = "@@activate\n" + content
		}
		if e.DontActivate {
			content = "@@dont_activate\n" + content
		}
		out.Entries = append(out.Entries, entry{ID: e.UID, Keys: nonNil(e.Keys), SecondaryKeys: nonNil(e.Secondary), Comment: e.Comment,
			Content: content, Constant: e.Constant, Selective: e.Selective, InsertionOrder: e.Order, Priority: e.Priority,
			Enabled: e.Enabled, Position: pos, Extensions: x})
	}
	return json.Marshal(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
