// Package cards holds what a character card brings to a prompt besides its
// own text: lorebooks (a card's character_book and SillyTavern world-info
// files), the activation of their entries by what the chat says, and the
// macros ({{char}}, {{random::…}}, {{setvar::…}}, …) in card and lore text.
// It is pure logic over plain values; reading files happens at its edge.
package cards
