package models_test

import (
	"context"
	"testing"
	"time"

	"troupe/models"
)

func TestFailingJobsOfACardInASpace(t *testing.T) {
	eachStore(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		mine := newChat(t, st, "console:ada/maren")
		other := newChat(t, st, "console:ada/other")
		// The other chat belongs to another card.
		if err := st.UpsertCard(ctx, models.Card{ID: "tess", Name: "Tess", Data: "{}"}); err != nil {
			t.Fatal(err)
		}
		if err := st.DB().Model(&models.Chat{}).Where("id = ?", other.ID).Update("card_id", "tess").Error; err != nil {
			t.Fatal(err)
		}
		record := func(kind, key, outcome string) {
			t.Helper()
			if err := st.RecordJob(ctx, models.JobRecord{Kind: kind, Key: key, Outcome: outcome, Reason: "why " + key}); err != nil {
				t.Fatal(err)
			}
		}
		record("compact", mine.ID, "failed")
		record("compact", mine.ID, "failed")
		record("recap", mine.ID, "written")
		record("compact", other.ID, "failed")
		record("consolidate", "maren|console:local:ada", "failed")
		record("consolidate", "maren|telegram:user:1", "failed")
		at := time.Now().Add(time.Minute).Truncate(time.Second)
		if err := st.SetJobRetry(ctx, "compact", mine.ID, at); err != nil {
			t.Fatal(err)
		}
		// A retry time is only set on a failure.
		if err := st.SetJobRetry(ctx, "recap", mine.ID, at); err != nil {
			t.Fatal(err)
		}

		got, err := st.FailingJobs(ctx, "maren", "console:local:ada", "maren|console:local:ada")
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]models.JobRecord{}
		for _, r := range got {
			byKey[r.Kind+" "+r.Key] = r
		}
		if len(got) != 2 || byKey["compact "+mine.ID].Failures != 2 || byKey["consolidate maren|console:local:ada"].Reason == "" {
			t.Fatalf("failing jobs = %+v, want this chat's compaction (2 failures) and this space's consolidation", got)
		}
		if r := byKey["compact "+mine.ID]; r.RetryAt == nil || !r.RetryAt.Equal(at) {
			t.Errorf("retry at = %v, want %s", r.RetryAt, at)
		}
		if rec, _ := st.Job(ctx, "recap", mine.ID); rec.RetryAt != nil {
			t.Errorf("a written job got a retry time: %+v", rec)
		}
		counts, err := st.FailingJobCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if counts["compact"] != 2 || counts["consolidate"] != 2 || counts["recap"] != 0 {
			t.Errorf("failing counts = %v, want compact 2, consolidate 2", counts)
		}
		// A success clears the failure and its retry time.
		record("compact", mine.ID, "written")
		if rec, _ := st.Job(ctx, "compact", mine.ID); rec.Failures != 0 || rec.RetryAt != nil {
			t.Errorf("after a success: %+v, want no failures and no retry time", rec)
		}
	})
}
