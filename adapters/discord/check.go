package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/bwmarrin/discordgo"

	"troupe/config"
)

// ErrTokenRefused is Discord's 401 to the bot token.
var ErrTokenRefused = errors.New("discord: bot token refused")

// CheckToken asks Discord who the bot is (GET /users/@me), once, and
// returns its username. A refused token is ErrTokenRefused.
func CheckToken(ctx context.Context, cfg config.Discord) (string, error) {
	if strings.TrimSpace(cfg.Token.Value()) == "" {
		return "", ErrNoToken
	}
	s, err := restSession(cfg)
	if err != nil {
		return "", err
	}
	u, err := s.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		var re *discordgo.RESTError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
			return "", ErrTokenRefused
		}
		return "", fmt.Errorf("discord: GET /users/@me: %w", restProblem(err))
	}
	return u.Username, nil
}

// restProblem is err without the response body discordgo quotes.
func restProblem(err error) error {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil {
		return fmt.Errorf("HTTP %d", re.Response.StatusCode)
	}
	return err
}
