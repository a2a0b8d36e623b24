// Package jobs moves memory work between processes on a Redis task queue
// (asynq on go-redis v9): compaction, recap and consolidation jobs that carry
// only keys, deduplicated per key, retried with backoff, delayed for idle
// detection, and a sweeper that re-derives owed work from the database.
// Without a Redis URL it serves the same code from an in-process Redis.
package jobs
