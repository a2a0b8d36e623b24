// Package web is the inspector: pages an operator opens in a browser to
// see what troupe remembers and why a character said what it did, and to
// steer that memory on the same paths the CLI and the chat commands use.
//
// It is served by `troupe serve` and by `troupe web` on web.listen, and is
// off unless web.token is set. Every page needs a session opened with the
// token through a form; every change needs the session's CSRF token in a
// hidden form field; a read-only token opens sessions that may only look.
// Pages are Go templates rendered on the server; the one script (live
// updates) is a static file, and the Content-Security-Policy allows no
// other. Card, model and user text is untrusted and escaped everywhere.
//
// web reads through models and memory and changes memory only through
// them; what needs the job queue (a consolidation after an edit or a
// forget) goes through the Queue it is given.
package web
