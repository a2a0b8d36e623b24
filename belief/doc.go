// Package belief is the pure engine of a character's reflection (seed 002):
// it turns the perceptions a character received since its last reflection
// into its own beliefs, by evidence, and keeps those beliefs honest.
//
// Over plain Go values it builds the prompts (the reflection request, the
// belief check and the one repair request), parses the model's JSON answers
// tolerantly, and enforces the evidence rules item by item: what a proposal
// may add, raise, lower, merge or drop, what is corrected and what is dropped
// or refused, always with a reason that names no story text. It also selects
// the beliefs to check against new perceptions and applies the check's
// answers idempotently, decides when a chat's characters reflect, tells which
// perceptions fold into which belief, and which beliefs a forgotten chat
// takes with it.
//
// The package reads no database, calls no model and enqueues no job: the
// caller loads the values, asks the model and installs the returned changes
// in one transaction.
package belief
