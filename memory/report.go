package memory

import (
	"context"
	"time"

	"troupe/models"
	"troupe/prompt"
)

// Report is what /memory and `troupe memory show` tell about a card's
// memory in a space.
type Report struct {
	// Resident is the resident summary exactly as it is injected.
	Resident string
	// ResidentCutLines counts the lines of the stored resident the
	// injected one leaves out or cuts inside, ResidentHandCut those of
	// them a person wrote; ResidentCut are those lines, tags stripped
	// (Report only: ChatReport leaves them out, as no prompt holds them).
	ResidentCutLines, ResidentHandCut int
	ResidentCut                       []string
	// Merged counts chats whose current recap is merged.
	Merged int
	// Owed counts recaps written but not merged, and deletions not yet
	// consolidated.
	Owed int
	// LastConsolidation is when the handbook was last written.
	LastConsolidation time.Time
	// LastReorganize is when a reorganize last ran (zero: never), and
	// ReorganizeChange what it changed.
	LastReorganize   time.Time
	ReorganizeChange models.ReorganizeChange
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

// Report describes a card's memory in a space, whole: for its operator.
func (s *Service) Report(ctx context.Context, cardID, spaceID string) (Report, error) {
	r, err := s.report(ctx, cardID, spaceID, "", 0)
	if err != nil {
		return r, err
	}
	r.LastConsolidation, _ = s.store.HandbookTime(ctx, cardID, spaceID)
	if rs, ok := s.store.(ReorganizeStore); ok {
		st, err := rs.Reorganize(ctx, cardID, spaceID)
		if err != nil {
			return r, err
		}
		if c, ok := st.Change(); ok {
			r.LastReorganize, r.ReorganizeChange = *st.LastRunAt, c
		}
	}
	return r, nil
}

// ChatReport is Report narrowed to what one chat's prompts may hold, for
// /memory asked where several people read: the resident summary fitted to
// what others characters (the chat's scene) leave of the envelope, as a
// turn injects it; Merged and Owed of this chat's recap alone; the failing
// work of this chat and of the card's consolidation by kind and time only,
// without the key or the reason (a reason can quote another chat's story,
// or a provider's error); no consolidation time, which moves with other
// channels' chats.
func (s *Service) ChatReport(ctx context.Context, cardID, spaceID, chatID string, others int) (Report, error) {
	r, err := s.report(ctx, cardID, spaceID, chatID, others)
	r.ResidentCut = nil
	for i := range r.Failures {
		r.Failures[i].Key, r.Failures[i].Reason = "", ""
	}
	return r, err
}

// report reads a card's memory in a space; a chatID narrows the counts and
// failures to that chat (and the card's consolidation).
func (s *Service) report(ctx context.Context, cardID, spaceID, chatID string, others int) (Report, error) {
	var r Report
	state, err := s.store.LoadMemory(ctx, cardID, spaceID)
	if err != nil {
		return r, err
	}
	lang, _ := s.cardLanguage(ctx, cardID)
	v := prompt.RenderResident(lang, ResidentOf(state.Resident), others, s.Budget())
	r.Resident, r.ResidentCut, r.ResidentCutLines, r.ResidentHandCut = v.Text, v.Cut, len(v.Cut), v.HandCut
	for _, e := range state.Entries {
		if chatID != "" && e.ChatID != chatID {
			continue
		}
		if e.RecapHash != "" && e.RecapHash == e.MergedHash {
			r.Merged++
		} else {
			r.Owed++
		}
	}
	spaceKey := models.MemoryJobKey(cardID, spaceID)
	recs, err := s.store.FailingJobs(ctx, cardID, spaceID, spaceKey)
	if err != nil {
		return r, err
	}
	for _, rec := range recs {
		if chatID != "" && rec.Key != chatID && rec.Key != spaceKey {
			continue
		}
		f := JobFailure{Kind: rec.Kind, Key: rec.Key, Reason: rec.Reason, At: rec.UpdatedAt, Attempts: rec.Failures}
		if rec.RetryAt != nil {
			f.NextTry = *rec.RetryAt
		}
		r.Failures = append(r.Failures, f)
	}
	return r, nil
}
