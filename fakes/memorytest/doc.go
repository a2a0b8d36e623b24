// Package memorytest is a scripted scribe: it answers the memory prompts
// troupe sends to the fake OpenAI server (package openaitest) with
// well-formed outputs (or, on request, broken ones), in the same formats a
// real scribe model must write, so memory's background jobs run end to end.
//
// It is one of troupe's fakes (see the fakes directory): the troupe binary
// carries it because `troupe bench` and `troupe eval` play whole stories
// through the real pipeline without a model, and their recaps, records and
// reflections come from this scribe. Tests use it for the same reason. It
// does not import package testing.
package memorytest
