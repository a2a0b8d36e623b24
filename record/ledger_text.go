package record

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// LedgerText renders a ledger snapshot (the recorder's JSON) for people:
// a line per field, names sorted. A snapshot that is not the recorder's
// JSON comes back as it is; an empty one as "".
func LedgerText(lang, snapshot string) string {
	var l Ledger
	if err := json.Unmarshal([]byte(snapshot), &l); err != nil {
		return snapshot
	}
	w := textWords[lang]
	if w.time == "" {
		w = textWords["en"]
	}
	var b strings.Builder
	line := func(label, value string) {
		if strings.TrimSpace(value) != "" {
			fmt.Fprintf(&b, "%s%s\n", label, value)
		}
	}
	pairs := func(m map[string]string) string {
		keys := sortedKeys(m)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = fmt.Sprintf(w.pair, k, m[k])
		}
		return strings.Join(out, w.sep)
	}
	line(w.time, l.Time)
	line(w.place, l.Place)
	line(w.where, pairs(l.Where))
	for _, name := range sortedKeys(l.Inventory) {
		if items := l.Inventory[name]; len(items) > 0 {
			line(fmt.Sprintf(w.holds, name), strings.Join(items, w.sep))
		}
	}
	line(w.flags, pairs(l.Flags))
	line(w.threads, strings.Join(l.Threads, w.sep))
	line(w.roster, strings.Join(l.Roster, w.sep))
	return strings.TrimRight(b.String(), "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type textWordsT struct {
	time, place, where, holds, flags, threads, roster, pair, sep string
}

var textWords = map[string]textWordsT{
	"en": {time: "Time: ", place: "Scene: ", where: "Where each is: ", holds: "%s carries: ", flags: "Flags: ",
		threads: "Open threads: ", roster: "Roster: ", pair: "%s (%s)", sep: "; "},
	"zh": {time: "时间：", place: "场景：", where: "各人所在：", holds: "%s 身上带着：", flags: "标记：",
		threads: "未了之事：", roster: "登场人物：", pair: "%s（%s）", sep: "；"},
}
