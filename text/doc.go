// Package text holds the rules every package follows when it puts people's
// words into a side model's prompt: user, card and platform text is data,
// so nothing in it may pass for the prompt's own structure — its tags, its
// speaker lines, or the provenance markers ([chat:…], [e:…], [p:…], [b:…],
// [t:…]) that the engine alone writes and later trusts.
package text
