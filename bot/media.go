package bot

import (
	"context"

	"troupe/media"
)

// Transcriber turns recorded speech into text: an OpenAI-compatible
// /v1/audio/transcriptions endpoint (Whisper, faster-whisper servers).
type Transcriber interface {
	Transcribe(ctx context.Context, audio media.File) (string, error)
}

// Voicer speaks a reply: an OpenAI-compatible /v1/audio/speech endpoint.
// voice is the voice's name at the endpoint ("" for its default). The file
// it returns is what a player hears (Kind media.Voice).
type Voicer interface {
	Speak(ctx context.Context, text, voice string) (media.File, error)
}

// Painter draws a picture from a description: an OpenAI-compatible
// /v1/images/generations endpoint. The file it returns is an image.
type Painter interface {
	Paint(ctx context.Context, prompt string) (media.File, error)
}
