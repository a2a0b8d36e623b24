package discord

import (
	"errors"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// Sentinel errors of the adapter.
var (
	// ErrNoToken: discord.token is empty.
	ErrNoToken = errors.New("discord: no token")
	// ErrRunning: Run was called twice.
	ErrRunning = errors.New("discord: already running")
	// errNoWebhook: the character cannot speak through a webhook here.
	errNoWebhook = errors.New("discord: no webhook in this channel")
)

// restStatus returns the HTTP status and Discord error code of a REST error,
// or zeros when err is not one.
func restStatus(err error) (status, code int) {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return 0, 0
	}
	if re.Message != nil {
		code = re.Message.Code
	}
	return re.Response.StatusCode, code
}

// permanent reports whether a REST error will fail again when retried: every
// 4xx (discordgo waits out 429s itself) is, network errors and 5xx are not.
func permanent(err error) bool {
	status, _ := restStatus(err)
	return status >= 400 && status < 500
}

// gone reports whether err says the message, webhook or channel no longer
// exists.
func gone(err error) bool {
	status, code := restStatus(err)
	switch code {
	case discordgo.ErrCodeUnknownMessage, discordgo.ErrCodeUnknownWebhook, discordgo.ErrCodeUnknownChannel:
		return true
	}
	return status == http.StatusNotFound
}

// forbidden reports whether err says the bot lacks a permission.
func forbidden(err error) bool {
	status, code := restStatus(err)
	return status == http.StatusForbidden || code == discordgo.ErrCodeMissingPermissions
}
