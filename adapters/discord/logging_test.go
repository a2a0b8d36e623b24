package discord

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/config"
	"troupe/models/testenv"
)

// TestLibraryLogsGoToTheAdaptersLogger checks that discordgo's own lines
// reach troupe's logger, with their level, instead of the standard logger,
// and that building another adapter (New) does not take them over: only a
// running adapter does. Not parallel: discordgo's logger is package-wide.
func TestLibraryLogsGoToTheAdaptersLogger(t *testing.T) {
	var buf, other testenv.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	routeLibraryLogs(log)
	if _, err := New(config.Discord{Token: "t"}, bot.New(bot.Options{}), slog.New(slog.NewTextHandler(&other, nil))); err != nil {
		t.Fatal(err)
	}
	discordgo.Logger(discordgo.LogError, 1, "websocket closed with %d", 4000)
	if other.String() != "" {
		t.Errorf("New took over discordgo's logger:\n%s", other.String())
	}
	discordgo.Logger(discordgo.LogDebug, 1, "heartbeat sent")
	out := buf.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, `msg="websocket closed with 4000"`) || !strings.Contains(out, "component=discordgo") {
		t.Errorf("library error not routed:\n%s", out)
	}
	if strings.Contains(out, "heartbeat") {
		t.Errorf("a debug line passed the info level:\n%s", out)
	}
}
