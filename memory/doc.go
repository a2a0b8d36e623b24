// Package memory is troupe's memory logic: prompt assembly, rolling
// compaction into relay summaries, recaps, consolidation into a handbook and
// resident summary, forgetting by provenance, budgets, scribe prompts and the
// parsers that validate the scribe's output, and token counting. It knows
// texts, budgets and prompts, and neither platforms nor Redis: the storage and
// the model it needs are interfaces it declares.
package memory
