package jobs

import (
	"context"
	"testing"

	"troupe/models/testenv"
)

// eachRedis runs body as a subtest on the embedded Redis and, when the
// test script started one, on redis-server.
func eachRedis(t *testing.T, body func(t *testing.T, r *Redis)) {
	urls := map[string]string{"embedded": ""}
	if testenv.Available() {
		urls["redis-server"] = testenv.FreshRedisURL(t)
	}
	for name, u := range urls {
		t.Run(name, func(t *testing.T) {
			r, err := OpenRedis(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			body(t, r)
		})
	}
}
