package web

import (
	"net/http"
	"sort"
	"time"

	"troupe/models"
)

// overviewChats bounds the chats the overview lists.
const overviewChats = 200

type overviewPage struct {
	Spaces  []spaceRow
	Owed    []kindCount
	Failing []models.JobRecord
	// OwedUnknown: the queue could not be read (or there is none here).
	OwedUnknown bool
	// Notice says what a change that led here did (noticeText).
	Notice string
	// Today is the local date; Traffic the model calls made on it by
	// kind, summed over every process on the database.
	Today   string
	Traffic []models.ModelUsage
}

func (overviewPage) PageTitle() string { return "Overview" }

type spaceRow struct {
	ID    string
	Cards []string
	Chats []models.ChatRow
}

type kindCount struct {
	Kind  string
	Count int
}

// owedCounter is the queue's count of owed jobs by kind, when the queue
// can say.
type owedCounter interface {
	Owed() (map[string]int, error)
}

// overview lists spaces, their cards and chats with their last activity,
// and the memory jobs owed and failing.
func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	chats, err := s.opt.Store.RecentChats(ctx, overviewChats)
	if err != nil {
		s.internal(w, r, "the chats", err)
		return
	}
	pg := overviewPage{Notice: noticeText(r.URL.Query().Get("notice"))}
	bySpace := map[string]*spaceRow{}
	var order []string
	for _, c := range chats {
		sp, ok := bySpace[c.SpaceID]
		if !ok {
			sp = &spaceRow{ID: c.SpaceID}
			bySpace[c.SpaceID] = sp
			order = append(order, c.SpaceID)
		}
		sp.Chats = append(sp.Chats, c)
		found := false
		for _, id := range sp.Cards {
			found = found || id == c.CardID
		}
		if !found {
			sp.Cards = append(sp.Cards, c.CardID)
		}
	}
	for _, id := range order {
		sort.Strings(bySpace[id].Cards)
		pg.Spaces = append(pg.Spaces, *bySpace[id])
	}
	if pg.Failing, err = s.opt.Store.FailedJobs(ctx); err != nil {
		s.internal(w, r, "the failing jobs", err)
		return
	}
	pg.OwedUnknown = true
	if q, ok := s.opt.Queue.(owedCounter); ok {
		if owed, err := q.Owed(); err == nil {
			pg.OwedUnknown = false
			for k, n := range owed {
				pg.Owed = append(pg.Owed, kindCount{Kind: k, Count: n})
			}
			sort.Slice(pg.Owed, func(i, j int) bool { return pg.Owed[i].Kind < pg.Owed[j].Kind })
		} else {
			s.log.Warn("inspector: read the queue", "err", err)
		}
	}
	pg.Today = s.opt.Now().Format(time.DateOnly)
	if pg.Traffic, err = s.opt.Store.ModelUsageOn(ctx, pg.Today); err != nil {
		s.internal(w, r, "the model traffic", err)
		return
	}
	s.render(w, r, http.StatusOK, "overview", pg)
}
