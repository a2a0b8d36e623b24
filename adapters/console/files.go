package console

import (
	"context"
	"fmt"

	"troupe/bot"
	"troupe/media"
)

var _ bot.FileSender = (*sink)(nil)

// SendFile says in one line that a file came (a spoken reply, a picture):
// who sent it, its name and size, and a picture's caption. A terminal
// plays and shows neither, so the bytes go nowhere.
func (k *sink) SendFile(_ context.Context, f media.File) error {
	who := k.speaker
	if who == "" {
		who = "troupe"
	}
	line := fmt.Sprintf("[%s sent %s, %s", who, f.Name, size(len(f.Data)))
	if f.Caption != "" {
		line += ": " + f.Caption
	}
	_, err := fmt.Fprintln(k.s.opt.Out, line+"]")
	return err
}

// size is n bytes as a person reads it: bytes, KB or MB.
func size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%d KB", (n+512)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}
