package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Questions keeps the pipeline's open yes/no questions in Redis, so that a
// button pressed on another troupe process than the one that asked (or
// after a restart) is answered the same way.
type Questions struct {
	rdb redis.UniversalClient
}

// NewQuestions returns the question store on r.
func NewQuestions(r *Redis) *Questions { return &Questions{rdb: r.Client} }

func questionKey(token string) string { return "troupe:question:" + token }

// Put stores data under token for ttl.
func (q *Questions) Put(ctx context.Context, token string, data []byte, ttl time.Duration) error {
	if err := q.rdb.Set(ctx, questionKey(token), data, ttl).Err(); err != nil {
		return fmt.Errorf("jobs: keep question: %w", err)
	}
	return nil
}

// Take removes and returns what is stored under token, at most once.
func (q *Questions) Take(ctx context.Context, token string) ([]byte, bool, error) {
	data, err := q.rdb.GetDel(ctx, questionKey(token)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("jobs: take question: %w", err)
	}
	return data, true, nil
}
