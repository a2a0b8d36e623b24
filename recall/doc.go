// Package recall is per-character recall (seed 002), as pure functions: the
// index terms of a text (words for alphabetic scripts, character bigrams for
// CJK, so Chinese is searchable on SQLite and PostgreSQL alike), the score of
// a candidate from importance, relevance, story-time recency and retention,
// fading with elapsed story time, maximal-marginal-relevance selection with
// associative extras, the preference of beliefs over the perceptions folded
// into them, and the block of what a character remembers, in its own words.
// Finding candidates in the database is the store's work; this package only
// ranks and renders them.
package recall
