package text

import (
	"encoding/json"
	"strings"
)

// maxObjectStarts bounds how many '{' JSONObject tries, so a long answer
// full of braces costs linear time, not quadratic.
const maxObjectStarts = 32

// JSONObject finds the JSON object in a side model's answer, the one way
// every reader of such an answer does: the first '{' from which a whole
// object decodes, inside a code fence or not, with any text before or after
// it. It returns where the object starts and ends in answer; ok is false
// when none of the first maxObjectStarts '{' opens one. A caller that wants
// nothing around the object checks answer[:start] and answer[end:].
func JSONObject(answer string) (start, end int, ok bool) {
	for tried, i := 0, 0; tried < maxObjectStarts; tried++ {
		k := strings.IndexByte(answer[i:], '{')
		if k < 0 {
			break
		}
		i += k
		dec := json.NewDecoder(strings.NewReader(answer[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == nil {
			return i, i + int(dec.InputOffset()), true
		}
		i++
	}
	return 0, 0, false
}
