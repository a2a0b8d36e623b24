// Package prompt builds and measures the prompt of one turn: it assembles
// the messages in DESIGN order (character and conventions, the "previously"
// message, the other players' note, the live branch with its injections,
// and the per-turn block of scene and recall just before what is new),
// expands the card, renders the speaking character's scene, fits the
// resident summary to the envelope the scene leaves (the resident's budget
// view), and fits the whole prompt to the model's context window, leaving
// out as little as it can. It counts tokens exactly (a BPE compiled into
// the binary) or by a calibrated estimate, and holds the prompt's fixed
// wording in English and Chinese.
//
// Everything here is a pure function over plain values, but for the token
// counter's lazily loaded vocabulary and the estimator's per-chat
// calibration. It imports no package of troupe's but text, cards (the card
// it expands) and record (the ledger a scene is a view of), and never
// memory: memory imports it, for messages, turns, beats and token counting,
// and reads the stored resident summary into the StoredResident the view
// takes. bot builds every turn's prompt with Build; cmd/troupe and web use
// its token counting and roles.
package prompt
