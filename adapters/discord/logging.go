package discord

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/bwmarrin/discordgo"
)

// discordgo logs through one package-wide function, which by default prints
// to the standard logger. routeLibraryLogs sends those lines to the logger of
// the adapter that started running last instead, so that they take troupe's
// level and format. Only Run sets it: New changes no package-wide state.
var (
	libraryLog    atomic.Pointer[slog.Logger]
	routeLogsOnce sync.Once
	libraryLevels = [...]slog.Level{discordgo.LogError: slog.LevelError, discordgo.LogWarning: slog.LevelWarn, discordgo.LogInformational: slog.LevelInfo, discordgo.LogDebug: slog.LevelDebug}
)

func routeLibraryLogs(log *slog.Logger) {
	libraryLog.Store(log.With("component", "discordgo"))
	routeLogsOnce.Do(func() {
		discordgo.Logger = func(level, _ int, format string, a ...any) {
			lv := slog.LevelDebug
			if level >= 0 && level < len(libraryLevels) {
				lv = libraryLevels[level]
			}
			libraryLog.Load().Log(context.Background(), lv, fmt.Sprintf(format, a...))
		}
	})
}
