package memory

import (
	"context"
	"encoding/json"

	"troupe/models"
	"troupe/record"
)

// memberLedgers gives each member of a scene its own ledger after a batch
// (record.Ledger.Witness): a member that perceived every event of the
// batch takes what the batch changed in the chat's ledger; any other keeps
// the ledger it had. Nil when the answer left the ledger as it was.
func memberLedgers(b models.RecordBatch, in record.Input, rec record.Record, cast []models.CastMember) map[string]string {
	if rec.Ledger == nil {
		return nil
	}
	out := make(map[string]string, len(cast))
	for _, m := range cast {
		var view record.Ledger
		if s := models.MemberLedger(b.Chat, m, b.Ledger, b.Views); s != "" {
			// A snapshot that is not the recorder's JSON holds nothing a
			// view can keep.
			_ = json.Unmarshal([]byte(s), &view)
		}
		out[m.Name] = ledgerText(view.Witness(in.Ledger, *rec.Ledger, in.Witnessed(m.Name)))
	}
	return out
}

// ledgerText is a ledger's snapshot: "" for an empty one, as for a chat
// with none.
func ledgerText(l record.Ledger) string {
	b, _ := json.Marshal(l)
	if string(b) == "{}" {
		return ""
	}
	return string(b)
}

// viewLedgers reads the chat's ledger and its members' own: the returned
// function gives the ledger of a member's view (models.MemberLedger), the
// one the scribe may see when it writes for that member.
func (s *Service) viewLedgers(ctx context.Context, chat models.Chat) (func(models.CastMember) string, error) {
	ledger, err := s.store.Ledger(ctx, chat.ID)
	if err != nil {
		return nil, err
	}
	views, err := s.store.ViewLedgers(ctx, chat.ID)
	if err != nil {
		return nil, err
	}
	return func(m models.CastMember) string { return models.MemberLedger(chat, m, ledger, views) }, nil
}
