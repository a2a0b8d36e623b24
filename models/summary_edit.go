package models

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ErrSceneSummary: a scene's chat keeps a summary per member's view, so
// an edit must name whose.
var ErrSceneSummary = errors.New("models: a scene keeps a summary per character's view: name the character")

// ActiveSummaries returns the summaries a chat's branch holds now: the
// newest on the branch for a one-card chat, and for a scene the one of
// each member's view that has member rows, once each, oldest first. None
// when nothing was compacted yet.
func (s *Store) ActiveSummaries(ctx context.Context, chat Chat) ([]SummaryView, error) {
	members, err := s.SummaryMembers(ctx, chat.ID)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, ms := range members {
		for _, m := range ms {
			names[m] = true
		}
	}
	who := []string{""}
	if len(names) > 0 {
		who = who[:0]
		for n := range names {
			who = append(who, n)
		}
	}
	seen := map[string]bool{}
	var out []SummaryView
	for _, w := range who {
		br, err := s.LoadView(ctx, chat.HeadID, w)
		if err != nil {
			return nil, err
		}
		if br.Summary == nil || seen[br.Summary.ID] {
			continue
		}
		seen[br.Summary.ID] = true
		out = append(out, SummaryView{ID: br.Summary.ID, ChatID: chat.ID, CoversThroughID: br.Summary.CoversThroughID,
			Members: members[br.Summary.ID], Beats: br.Summary.Beats, Content: br.Summary.Content, CreatedAt: br.Summary.CreatedAt})
	}
	sortSummaryViews(out)
	return out, nil
}

// EditSummary replaces by hand (the hard path) the active summary of a
// chat's branch: of the chat, or in a scene of character's view. The new
// text is stored as a new summary covering what the old one covered, for
// the same members, so the old one stays in the chat's summaries, its
// history (ChatSummaries lists them all; they go when the chat is
// forgotten, as the chat's other text does, which a copy in the card's
// memory history would outlive). The next compaction merges from the new text (one running meanwhile
// finds the summary changed under it and starts again), and the chat's
// recap is rewritten from it. It holds the chat's lock and returns
// ErrNotFound when the chat has no summary yet (or no such chat),
// ErrSceneSummary when a scene's edit names no character, and the
// stored summary otherwise.
func (s *Store) EditSummary(ctx context.Context, chatID, character, content string) (Summary, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return Summary{}, fmt.Errorf("models: edit summary of chat %s: the new summary is empty", chatID)
	}
	var sum Summary
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		chat, err := s.lockChat(tx, chatID)
		if err != nil {
			return err
		}
		br, err := walkBranch(tx, chat.HeadID, character)
		if err != nil {
			return err
		}
		if br.Summary == nil {
			return ErrNotFound
		}
		var rows []SummaryMember
		if err := tx.Where("summary_id = ?", br.Summary.ID).Order("character_name").Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) > 0 && character == "" {
			return ErrSceneSummary
		}
		s.paused("edit summary")
		sum = Summary{ID: NewID(), ChatID: chatID, CoversThroughID: br.Summary.CoversThroughID, Content: content, Beats: br.Summary.Beats, CreatedAt: s.now()}
		if err := tx.Create(&sum).Error; err != nil {
			return err
		}
		for i := range rows {
			rows[i].SummaryID = sum.ID
		}
		if len(rows) > 0 {
			return tx.Create(&rows).Error
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrChatGone), errors.Is(err, ErrSceneSummary):
		return Summary{}, err
	case err != nil:
		return Summary{}, fmt.Errorf("models: edit summary of chat %s: %w", chatID, err)
	}
	return sum, nil
}

// SummaryView is an active summary as the memory views show it: its chat,
// the message it covers through, the scene members whose view it is
// (none for a one-card chat) and its whole text.
type SummaryView struct {
	ID              string    `json:"id"`
	ChatID          string    `json:"chat_id"`
	CoversThroughID string    `json:"covers_through_id"`
	Members         []string  `json:"members,omitempty"`
	Beats           int       `json:"beats"`
	Content         string    `json:"content"`
	CreatedAt       time.Time `json:"created_at"`
}

func sortSummaryViews(vs []SummaryView) {
	sort.Slice(vs, func(i, j int) bool { return vs[i].ID < vs[j].ID })
}
