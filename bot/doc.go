// Package bot is troupe's shared turn pipeline and the commands every adapter
// offers. Adapters turn platform events into an Event, Submit it to the
// Engine (which orders each channel's events) and render what the pipeline
// writes to a Sink, streaming a reply through one Renderer over the
// platform's post, edit and delete of a message (Messages); bot resolves the channel's space, card and chat,
// stores messages, assembles the prompt with the memory package, streams the
// model's reply and tells the job queue what is owed. It knows nothing about
// Discord or Telegram.
package bot
