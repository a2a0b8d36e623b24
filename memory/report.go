package memory

import (
	"context"
	"errors"
	"time"

	"troupe/models"
)

// Report is what /memory and `troupe memory show` tell about a card's
// memory in a space.
type Report struct {
	// Resident is the resident summary exactly as it is injected.
	Resident string
	// Merged counts chats whose current recap is merged.
	Merged int
	// Owed counts recaps written but not merged, and deletions not yet
	// consolidated.
	Owed int
	// LastConsolidation is when the handbook was last written.
	LastConsolidation time.Time
	// LastFailure and its reason, from the job table.
	LastFailure       time.Time
	LastFailureReason string
}

// Report describes a card's memory in a space.
func (s *Service) Report(ctx context.Context, cardID, spaceID string) (Report, error) {
	var r Report
	st, err := s.store.LoadMemory(ctx, cardID, spaceID)
	if err != nil {
		return r, err
	}
	lang, _ := s.cardLanguage(ctx, cardID)
	r.Resident = FitResident(lang, StripTags(st.Resident), 0, s.Budget())
	for _, e := range st.Entries {
		if e.RecapHash != "" && e.RecapHash == e.MergedHash {
			r.Merged++
		} else {
			r.Owed++
		}
	}
	rec, err := s.store.Job(ctx, KindConsolidate, models.MemoryJobKey(cardID, spaceID))
	switch {
	case errors.Is(err, models.ErrNotFound):
	case err != nil:
		return r, err
	default:
		if rec.Outcome == string(Failed) {
			r.LastFailure, r.LastFailureReason = rec.UpdatedAt, rec.Reason
		}
	}
	r.LastConsolidation, _ = s.store.HandbookTime(ctx, cardID, spaceID)
	return r, nil
}
