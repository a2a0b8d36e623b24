// Package memory writes troupe's memory in the background: rolling
// compaction into relay summaries, recaps, consolidation into a handbook and
// resident summary, the recorder's ledger, reflection and reorganizing of
// beliefs, forgetting by provenance, the scribe prompts of those jobs and
// the parsers that validate the scribe's output, and the stored formats
// they write (the handbook's and resident's tags, headings and hand lines).
// It also serves turn-time recall. It knows texts, budgets and prompts, and
// neither platforms nor Redis: the storage and the model it needs are
// interfaces it declares.
//
// The prompt of a turn is built in package prompt, which memory imports
// (messages, turns, beats, token counting, the resident's budget view) and
// which never imports memory; ResidentOf reads a stored resident summary
// for that view.
package memory
