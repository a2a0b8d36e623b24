package telegram

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"troupe/config"
)

// CheckToken asks the Bot API who the bot is (getMe), once, and returns its
// username. A refused token is ErrUnauthorized; any other failure comes
// back with the token removed from its text.
func CheckToken(ctx context.Context, cfg config.Telegram) (string, error) {
	token := strings.TrimSpace(cfg.Token.Value())
	if token == "" {
		return "", fmt.Errorf("telegram: no token")
	}
	endpoint := cfg.APIEndpoint
	if endpoint == "" {
		endpoint = tgbotapi.APIEndpoint
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	api, err := tgbotapi.NewBotAPIWithClient(token, endpoint, ctxClient{ctx: cctx, c: &http.Client{}})
	if err != nil {
		err = apiError("getMe", token, err)
		if e, ok := asAPI(err); ok && (e.Code == 401 || e.Code == 404) {
			return "", fmt.Errorf("%w: %v", ErrUnauthorized, err)
		}
		return "", err
	}
	return api.Self.UserName, nil
}
