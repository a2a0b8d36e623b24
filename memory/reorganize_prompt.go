package memory

import (
	"encoding/json"
	"fmt"
	"strings"

	"troupe/prompt"
	"troupe/text"
)

// reorganizeSystem is the reorganize prompt's instruction, by language.
var reorganizeSystem = map[string]string{
	"en": `You help tidy a character's memory. Below are numbered pairs of entries from it. For each pair, decide whether the two entries state the same fact: one may say it in other words or with less detail, but neither may say anything the other contradicts or lacks that matters (a different name, number, place, time, or who did what to whom makes them different facts).

Answer with one JSON object and nothing else: {"same": [the numbers of the pairs that state the same fact]}. Write {"same": []} when none do. Do not rewrite the entries.`,
	"zh": `你帮忙整理一个角色的记忆。下面是记忆中成对编号的条目。逐对判断两条说的是否是同一件事：其中一条可以换个说法或少些细节，但不能有要紧的出入（人名、数字、地点、时间或谁对谁做了什么不同，就是两件事）。

只回答一个 JSON 对象，别的什么也不写：{"same": [说的是同一件事的那些对的编号]}。没有一对相同时写 {"same": []}。不要改写条目。`,
}

// ReorganizePrompt asks the scribe which pairs state the same fact. The
// entries go without their tags: provenance is the engine's.
func ReorganizePrompt(lang string, pairs []Pair) []prompt.Message {
	lang = langOr(lang)
	var b strings.Builder
	b.WriteString("<pairs>\n")
	for i, p := range pairs {
		fmt.Fprintf(&b, "[%d]\nA: %s\nB: %s\n", i+1, text.Line(text.Clip(p.A, maxPairChars)), text.Line(text.Clip(p.B, maxPairChars)))
	}
	b.WriteString("</pairs>")
	return []prompt.Message{{Role: prompt.RoleSystem, Content: reorganizeSystem[lang]}, {Role: prompt.RoleUser, Content: b.String()}}
}

// maxPairChars bounds each entry in the prompt.
const maxPairChars = 300

// IsReorganizePrompt reports whether a system prompt is the reorganize
// one, for fakes that answer it.
func IsReorganizePrompt(system string) bool {
	return system == reorganizeSystem["en"] || system == reorganizeSystem["zh"]
}

// ParseReorganize reads the scribe's answer to a reorganize prompt of n
// pairs: the pairs it judged the same, by index from 0. Anything but one
// JSON object whose "same" lists pair numbers from 1 to n is refused.
func ParseReorganize(answer string, n int) ([]int, error) {
	t := strings.TrimSpace(stripFence(answer))
	i, j, ok := text.JSONObject(t)
	if !ok {
		return nil, &AnswerError{Reason: `the answer must be one JSON object {"same": [...]}`}
	}
	if strings.TrimSpace(t[:i]) != "" || strings.TrimSpace(t[j:]) != "" {
		return nil, &AnswerError{Reason: "there is text around the JSON object"}
	}
	var a struct {
		Same *[]json.Number `json:"same"`
	}
	dec := json.NewDecoder(strings.NewReader(t[i:j]))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		return nil, &AnswerError{Reason: `the answer is not a JSON object {"same": [pair numbers]}`}
	}
	if a.Same == nil {
		return nil, &AnswerError{Reason: `the object must have the key "same"`}
	}
	seen := map[int]bool{}
	var out []int
	for _, num := range *a.Same {
		k, err := num.Int64()
		if err != nil || k < 1 || int(k) > n {
			return nil, &AnswerError{Reason: fmt.Sprintf(`"same" must list pair numbers from 1 to %d`, n)}
		}
		if !seen[int(k)] {
			seen[int(k)] = true
			out = append(out, int(k)-1)
		}
	}
	return out, nil
}
