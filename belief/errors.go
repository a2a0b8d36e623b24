package belief

import "errors"

// ErrAnswer is wrapped by every error for a model answer that is not the
// contract as a whole (no JSON object, or an object with none of the
// expected keys). The caller sends RepairPrompt once, with that error.
var ErrAnswer = errors.New("reflect: the answer is not the expected JSON object")

// ErrConfidence is returned by ParseConfidence for a word that is not one of
// doubtful, likely or sure.
var ErrConfidence = errors.New("reflect: unknown confidence")
