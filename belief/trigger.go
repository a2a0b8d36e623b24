package belief

import (
	"sort"
	"strings"
)

// TriggerConfig is the reflection.* settings that decide when it runs
// (their defaults are config.Default's).
type TriggerConfig struct {
	// Auto off means only /reflect runs reflection.
	Auto bool
	// EveryTurns: a chat's characters reflect after this many turns since
	// its last reflection (automatic or not).
	EveryTurns int
	// MinTurns: no automatic run within this many turns of the last one.
	MinTurns int
	// PerRun: at most this many characters per automatic run.
	PerRun int
	// MinNew: only characters with at least this many new perceptions.
	MinNew int
}

// Role says what kind of character someone is in a chat.
type Role string

// The roles; only cast members reflect.
const (
	Cast       Role = "cast"
	Player     Role = "player"
	Background Role = "background"
)

// Candidate is one character of the chat and how many perceptions it has
// received since its last reflection.
type Candidate struct {
	Name string
	Role Role
	New  int
}

// Scene is where and when the story stands, from the ledger: the place the
// player's character is in and the story day. An empty place or a zero day
// is unknown and never makes a scene change.
type Scene struct {
	Place string
	Day   int
}

// TriggerInput is a chat's state after a turn, as the trigger needs it.
// Turns are the chat's turn numbers; 0 in a Last field means never.
type TriggerInput struct {
	Turn int64
	// LastTurn is the turn of the chat's last reflection, automatic or not.
	LastTurn int64
	// LastAutoTurn is the turn of its last automatic reflection.
	LastAutoTurn int64
	// Manual is a /reflect request.
	Manual bool
	// Scene now and at the last reflection.
	Scene, LastScene Scene
	// Within maps a place to the place it is within (entities' within).
	Within     map[string]string
	Candidates []Candidate
}

// Why names what started a run.
type Why string

// The reasons a run starts.
const (
	WhyManual      Why = "manual"
	WhyEveryTurns  Why = "every_turns"
	WhySceneChange Why = "scene_change"
)

// Decision is whether reflection runs now, why, and for whom, in order.
type Decision struct {
	Run        bool
	Why        Why
	Characters []string
}

// Decide says whether a chat's characters reflect now. A manual request runs
// every cast member with something new. An automatic run needs Auto, at
// least MinTurns turns since the last automatic one, and EveryTurns turns
// since the last reflection or a scene change (the place moved somewhere
// neither the last place nor within or around it, or a story day passed);
// it takes the cast members with at least MinNew new perceptions, most
// first, at most PerRun. Players and background characters never reflect.
// No character to run means no run.
func Decide(cfg TriggerConfig, in TriggerInput) Decision {
	if in.Manual {
		return decision(WhyManual, pick(in.Candidates, 1, 0))
	}
	why, ok := Due(cfg, in)
	if !ok {
		return Decision{}
	}
	return decision(why, pick(in.Candidates, max(cfg.MinNew, 1), cfg.PerRun))
}

// Due says whether an automatic run is due by the chat's turns and scene
// alone, before its candidates are counted (Decide then picks them): Auto,
// MinTurns since the last automatic run, and EveryTurns since the last
// run or a scene change. in.Candidates is not read.
func Due(cfg TriggerConfig, in TriggerInput) (Why, bool) {
	if !cfg.Auto || in.Turn-in.LastAutoTurn < int64(cfg.MinTurns) {
		return "", false
	}
	switch {
	case cfg.EveryTurns > 0 && in.Turn-in.LastTurn >= int64(cfg.EveryTurns):
		return WhyEveryTurns, true
	case SceneChanged(in.LastScene, in.Scene, in.Within):
		return WhySceneChange, true
	}
	return "", false
}

func decision(why Why, chars []string) Decision {
	if len(chars) == 0 {
		return Decision{}
	}
	return Decision{Run: true, Why: why, Characters: chars}
}

// pick returns the cast members with at least minNew new perceptions, most
// first (then by name), at most limit (0: all).
func pick(cands []Candidate, minNew, limit int) []string {
	var cs []Candidate
	for _, c := range cands {
		if c.Role == Cast && c.New >= minNew {
			cs = append(cs, c)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].New != cs[j].New {
			return cs[i].New > cs[j].New
		}
		return cs[i].Name < cs[j].Name
	})
	if limit > 0 && len(cs) > limit {
		cs = cs[:limit]
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// SceneChanged reports a scene change between two ledger states: a story day
// passed, or the place moved somewhere neither the last place nor within it
// or around it (one holds the other, through within).
func SceneChanged(last, now Scene, within map[string]string) bool {
	if last.Day > 0 && now.Day > last.Day {
		return true
	}
	a, b := placeKey(last.Place), placeKey(now.Place)
	if a == "" || b == "" || a == b {
		return false
	}
	return !holds(a, b, within) && !holds(b, a, within)
}

// holds reports whether place outer holds inner, through any depth of within.
func holds(outer, inner string, within map[string]string) bool {
	up := map[string]string{}
	for k, v := range within {
		up[placeKey(k)] = placeKey(v)
	}
	seen := map[string]bool{}
	for p := up[inner]; p != "" && !seen[p]; p = up[p] {
		if p == outer {
			return true
		}
		seen[p] = true
	}
	return false
}

func placeKey(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
