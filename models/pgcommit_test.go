package models_test

import (
	"context"
	"net/url"
	"testing"

	"gorm.io/gorm"

	"troupe/models"
	"troupe/models/testenv"
)

// On PostgreSQL a memory job's transaction commits without waiting for the
// disk, and everything else (a turn's store, a job's single statement)
// waits as before; the setting ends with the job's transaction.
func TestOnlyJobTransactionsCommitWithoutWaitingForTheDisk(t *testing.T) {
	testenv.Require(t)
	bs := testenv.Backends(t)
	b := bs[len(bs)-1]
	// The test server may run with synchronous_commit off (scripts/test
	// does, for speed): these connections start with it on, as a
	// deployed server's do.
	u, err := url.Parse(b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c synchronous_commit=on")
	u.RawQuery = q.Encode()
	b.DSN = u.String()
	st := testenv.OpenStore(t, b)
	if st.Dialect() != "postgres" {
		t.Fatalf("the last test backend is %s, want postgres", st.Dialect())
	}
	ctx := context.Background()
	inTx := func(ctx context.Context) string {
		t.Helper()
		var v string
		if err := st.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			return tx.Raw("SHOW synchronous_commit").Scan(&v).Error
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	outside := func(ctx context.Context) string {
		t.Helper()
		var v string
		if err := st.DB().WithContext(ctx).Raw("SHOW synchronous_commit").Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	job := models.Background(ctx)
	if got := inTx(job); got != "off" {
		t.Errorf("a job's transaction: synchronous_commit %s, want off", got)
	}
	if got := inTx(ctx); got != "on" {
		t.Errorf("a turn's transaction: synchronous_commit %s, want on", got)
	}
	if got := outside(job); got != "on" {
		t.Errorf("a job's statement outside a transaction: synchronous_commit %s, want on", got)
	}
	// The one connection a pool of one would hand out next is the job's.
	sqlDB, err := st.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(1)
	inTx(job)
	if got := outside(ctx); got != "on" {
		t.Errorf("after a job's transaction its connection keeps synchronous_commit %s", got)
	}
}
