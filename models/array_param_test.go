package models_test

import (
	"slices"
	"testing"

	"troupe/models"
	"troupe/models/testenv"
)

// TestArrayParametersRoundTrip sends the array parameters through pgx to
// PostgreSQL and reads each element back: quotes, backslashes, braces,
// commas, the word NULL, Chinese and empty strings arrive as they left,
// and an empty list is an empty array, not NULL.
func TestArrayParametersRoundTrip(t *testing.T) {
	testenv.Require(t)
	st := testenv.OpenStore(t, testenv.Backend{Name: "postgres", DSN: testenv.FreshPostgresDB(t)})
	texts := []string{`plain`, `a "quoted" word`, `back\slash`, `{braces}`, `a,b`, `NULL`, `凛冬将至`, ``, ` spaced `}
	var got []string
	if err := st.DB().Raw(`SELECT x FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS t(x, n) ORDER BY n`, models.TextArray(texts)).Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, texts) {
		t.Errorf("text[] came back as %q, sent %q", got, texts)
	}
	nums := []int64{0, -1, 1 << 40, 7}
	var gotNums []int64
	if err := st.DB().Raw(`SELECT x FROM unnest(CAST(? AS bigint[])) WITH ORDINALITY AS t(x, n) ORDER BY n`, models.Int64Array(nums)).Scan(&gotNums).Error; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotNums, nums) {
		t.Errorf("bigint[] came back as %v, sent %v", gotNums, nums)
	}
	for _, empty := range []any{models.TextArray(nil), models.TextArray([]string{})} {
		var n struct {
			Null bool
			Len  int
		}
		if err := st.DB().Raw(`SELECT CAST(? AS text[]) IS NULL AS null, COALESCE(cardinality(CAST(? AS text[])), -1) AS len`, empty, empty).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n.Null || n.Len != 0 {
			t.Errorf("an empty list arrived as null=%v cardinality=%d, want an empty array", n.Null, n.Len)
		}
	}
}
