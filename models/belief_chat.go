package models

import (
	"context"
	"fmt"
)

// chatBeliefsWhere keeps the beliefs whose every evidence link and every
// recorded contradiction cites a perception of one chat (at least one
// does), none of them of a whispered line or of the answer to one. Its
// arguments: the space, the characters, then the chat three times.
const chatBeliefsWhere = `space_id = ? AND character_name IN ?
 AND EXISTS (SELECT 1 FROM belief_evidence e WHERE e.belief_id = beliefs.id AND e.chat_id = ?)
 AND NOT EXISTS (SELECT 1 FROM belief_evidence e WHERE e.belief_id = beliefs.id AND e.chat_id <> ?)
 AND NOT EXISTS (SELECT 1 FROM belief_checks c WHERE c.belief_id = beliefs.id AND c.chat_id <> ?)
 AND NOT EXISTS (SELECT 1 FROM perceptions p
   JOIN events ev ON ev.id = p.event_id
   JOIN messages m ON m.id = ev.message_id
   LEFT JOIN messages pm ON pm.id = m.parent_id
   WHERE p.id IN (SELECT e.perception_id FROM belief_evidence e WHERE e.belief_id = beliefs.id
                  UNION SELECT c.perception_id FROM belief_checks c WHERE c.belief_id = beliefs.id)
     AND (m.whisper_to <> '' OR (m.role = 'assistant' AND pm.whisper_to IS NOT NULL AND pm.whisper_to <> '')))`

// ChatBeliefs lists the beliefs of characters in a space that rest on one
// chat alone: every perception a belief cites, for or against, is of that
// chat and was heard by all present there (no whisper, no answer to one).
// A belief that also rests on another chat or channel is left out, since
// its wording may carry what was said there. A belief is only as private as
// its evidence, so this is what a group may be shown of a chat's cast.
func (s *Store) ChatBeliefs(ctx context.Context, spaceID, chatID string, characters []string) ([]BeliefView, error) {
	if len(characters) == 0 || chatID == "" {
		return nil, nil
	}
	out, err := loadBeliefs(s.db.WithContext(ctx), chatBeliefsWhere, spaceID, characters, chatID, chatID, chatID)
	if err != nil {
		return nil, fmt.Errorf("models: beliefs of chat %s: %w", chatID, err)
	}
	return out, nil
}
