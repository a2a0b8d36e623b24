// Package record is the objective layer of a story's memory (seed 002): the
// plain events a turn leaves at once, without a model (one per action and one
// per line of dialogue, verbatim), and the recorder's side of the contract in
// DESIGN.md — the prompt that shows a batch of unrecorded events to the side
// model, the parser of its JSON answer, the item-by-item validation that
// drops what breaks a rule (with a reason that never quotes the story), the
// default perceptions every present cast member gets, and the ledger with
// each character's own view of it. It is pure: no database, no model call.
package record
