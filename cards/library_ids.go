package cards

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"sort"
	"strings"

	"troupe/text"
)

// FileIDs gives the card files of one folder, by file name, ids unique
// among them whatever order they come in: a file whose stem no other file
// has keeps it (CardIDFromPath, the ids troupe always gave); files that
// share a stem get the stem and extension ("wren.json" is "wren-json"),
// or, when that is not unique either (as for "Wren.json" beside
// "wren.json"), the stem and a short hash of the file name.
func FileIDs(names []string) map[string]string {
	byStem := map[string][]string{}
	for _, n := range names {
		s := CardIDFromPath(n)
		byStem[s] = append(byStem[s], n)
	}
	ids := map[string]string{}
	taken := map[string]bool{}
	var shared []string
	for s, files := range byStem {
		if len(files) == 1 {
			ids[files[0]], taken[s] = s, true
			continue
		}
		shared = append(shared, files...)
	}
	sort.Strings(shared)
	count := map[string]int{}
	for _, n := range shared {
		count[stemExtID(n)]++
	}
	var rest []string
	for _, n := range shared {
		if id := stemExtID(n); count[id] == 1 && !taken[id] {
			ids[n], taken[id] = id, true
			continue
		}
		rest = append(rest, n)
	}
	for _, n := range rest {
		for size := 8; ; size *= 2 {
			id := hashedID(n, n, size)
			if !taken[id] || size >= sha256.Size*2 {
				ids[n], taken[id] = id, true
				break
			}
		}
	}
	return ids
}

// stemExtID is the id of a card file from its stem and its extension.
func stemExtID(name string) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(filepath.Base(name), ext)
	return text.FitID(strings.ToLower(base+"-"+strings.TrimPrefix(ext, ".")), text.IDSize)
}

// hashedID is the id of a card file from its stem and the first n hex
// digits of the SHA-256 of key.
func hashedID(name, key string, n int) string {
	sum := sha256.Sum256([]byte(key))
	tail := "-" + hex.EncodeToString(sum[:])[:n]
	return text.CutRunes(CardIDFromPath(name), text.IDSize-len(tail)) + tail
}
