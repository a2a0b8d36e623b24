// Package cards reads character cards and keeps the library troupe plays
// from; it also holds world info, macros and lore activation.
package cards
