package prompt

// BeatStarts returns the index of the first message of each beat. A beat
// starts at a user message that does not follow another user message, so a
// turn whose messages were joined is one beat.
func BeatStarts(turns []Turn) []int {
	var starts []int
	for i, t := range turns {
		if t.Role == RoleUser && (i == 0 || turns[i-1].Role != RoleUser) {
			starts = append(starts, i)
		}
	}
	return starts
}

// CutStarts returns where a compaction may cut: the beat starts, and every
// user message of the unanswered run that ends the branch. Joined messages
// are one beat because one reply answers them all; a run nothing answered
// yet (the model failed, or the turn is still being written) has no such
// reply, and counted as one beat it could never be cut, so a pile of
// unanswered messages would hold the chat's compaction off for good.
func CutStarts(turns []Turn) []int {
	starts := BeatStarts(turns)
	if len(starts) == 0 {
		return starts
	}
	last := starts[len(starts)-1]
	for i := last + 1; i < len(turns); i++ {
		if turns[i].Role != RoleUser {
			return starts
		}
	}
	for i := last + 1; i < len(turns); i++ {
		starts = append(starts, i)
	}
	return starts
}
