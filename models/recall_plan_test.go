package models_test

import (
	"fmt"
	"strings"
	"testing"

	"troupe/models"
	"troupe/models/testenv"
)

// Loading recalled perceptions reads the messages by their parent_id index,
// one row at a time: never a scan of every message in the database, which
// PostgreSQL chose for the branch check (a hashed subplan) while the
// messages were few enough to look cheap.
func TestRecallLoadDoesNotScanMessages(t *testing.T) {
	testenv.Require(t) // the plan is PostgreSQL's
	st := testenv.OpenStore(t, testenv.Backend{Name: "postgres", DSN: testenv.FreshPostgresDB(t)})
	chat := newChat(t, st, "console:plan")
	db := st.DB()
	if err := db.Exec(`INSERT INTO messages (id, chat_id, parent_id, role, content, refused, created_at)
		SELECT lpad(i::text, 26, '0'), ?, lpad((i-1)::text, 26, '0'), 'user', 'line ' || i, false, now()
		FROM generate_series(1, 4000) AS i`, chat.ID).Error; err != nil {
		t.Fatal(err)
	}
	percs := map[int]map[string]string{}
	for i := range 50 {
		line := fmt.Sprintf("The bell rang %d times.", i)
		appendRecorded(t, st, chat, line, "*nods*", []models.PlainEvent{{Kind: "action", Text: line}}, nil)
		percs[i] = map[string]string{"Maren": line}
	}
	appendRecorded(t, st, chat, "later", "ok", []models.PlainEvent{{Kind: "action", Text: "later"}}, nil)
	recordAll(t, st, chat, "the bell", percs)
	if err := db.Exec("ANALYZE").Error; err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := db.Model(&models.Perception{}).Where("chat_id = ?", chat.ID).Pluck("id", &ids).Error; err != nil || len(ids) != 50 {
		t.Fatalf("perceptions %d (%v)", len(ids), err)
	}
	var plan []string
	if err := db.Raw("EXPLAIN "+models.RecallPerceptionsSQL, chat.ID, "head", false, true, ids).Scan(&plan).Error; err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "Seq Scan on messages") || strings.Contains(text, "hashed SubPlan") {
		t.Fatalf("the recall load scans the messages:\n%s", text)
	}
}
