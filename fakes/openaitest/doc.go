// Package openaitest is a fake OpenAI-compatible API server. It speaks the
// real wire format (chat completions streamed as server-sent events or not,
// with image parts checked and described; embeddings; a Jina/Cohere-style
// rerank; the model list; audio transcriptions and speech; image
// generations) over loopback HTTP, answers from a script of Answers that can
// inject faults, and records every request.
//
// It is one of troupe's fakes (see the fakes directory): the troupe binary
// carries it because `troupe bench` and `troupe eval` run the real pipeline
// and the real model client against it, so they measure troupe without a
// model, a key or a network. Tests use it for the same reason. It imports
// nothing of troupe's but text, and not package testing.
package openaitest
