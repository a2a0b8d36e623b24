package memory

import (
	"context"
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
	// Failures is the memory work of this card and space whose last run
	// failed, newest first: it stays owed and is tried again.
	Failures []JobFailure
}

// JobFailure is one key's failing memory job, from the job table.
type JobFailure struct {
	// Kind is KindCompact, KindRecap or KindConsolidate.
	Kind string
	// Key is the chat id, or "card|space" for a consolidation.
	Key    string
	Reason string
	// At is when it last failed; Attempts counts its failures in a row.
	At       time.Time
	Attempts int
	// NextTry is when the worker tries again; zero when the next turn or
	// sweep will.
	NextTry time.Time
}

// Report describes a card's memory in a space.
func (s *Service) Report(ctx context.Context, cardID, spaceID string) (Report, error) {
	var r Report
	state, err := s.store.LoadMemory(ctx, cardID, spaceID)
	if err != nil {
		return r, err
	}
	lang, _ := s.cardLanguage(ctx, cardID)
	r.Resident = FitResident(lang, StripTags(state.Resident), 0, s.Budget())
	for _, e := range state.Entries {
		if e.RecapHash != "" && e.RecapHash == e.MergedHash {
			r.Merged++
		} else {
			r.Owed++
		}
	}
	recs, err := s.store.FailingJobs(ctx, cardID, spaceID, models.MemoryJobKey(cardID, spaceID))
	if err != nil {
		return r, err
	}
	for _, rec := range recs {
		f := JobFailure{Kind: rec.Kind, Key: rec.Key, Reason: rec.Reason, At: rec.UpdatedAt, Attempts: rec.Failures}
		if rec.RetryAt != nil {
			f.NextTry = *rec.RetryAt
		}
		r.Failures = append(r.Failures, f)
	}
	r.LastConsolidation, _ = s.store.HandbookTime(ctx, cardID, spaceID)
	return r, nil
}
