package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/cards"
	troupetext "troupe/text"
)

// registerCommands replaces the application's slash commands with troupe's:
// in discord.dev_guild when set (they show at once there), else globally.
func (a *Adapter) registerCommands(ctx context.Context, s *discordgo.Session) error {
	app := a.app()
	if app == "" {
		return fmt.Errorf("discord: register commands: READY named no application")
	}
	cmds, err := s.ApplicationCommandBulkOverwrite(app, a.cfg.DevGuild, a.commandDefs(), discordgo.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("discord: register commands: %w", err)
	}
	a.log.Info("slash commands registered", "count", len(cmds), "guild_id", a.cfg.DevGuild)
	return nil
}

// commandDefs are the slash commands: the pipeline's commands, with the
// options Discord needs to offer their arguments.
func (a *Adapter) commandDefs() []*discordgo.ApplicationCommand {
	// Where the commands show: guilds, and the bot's DMs when those play.
	contexts := []discordgo.InteractionContextType{discordgo.InteractionContextGuild}
	if a.cfg.AllowDMs {
		contexts = append(contexts, discordgo.InteractionContextBotDM)
	}
	installs := []discordgo.ApplicationIntegrationType{discordgo.ApplicationIntegrationGuildInstall}
	str := discordgo.ApplicationCommandOptionString
	sub := discordgo.ApplicationCommandOptionSubCommand
	options := map[string][]*discordgo.ApplicationCommandOption{
		"card": {
			{Type: sub, Name: "set", Description: "Choose the character who plays in this channel", Options: []*discordgo.ApplicationCommandOption{
				{Type: str, Name: "card", Description: "The card's name or id", Required: true, Autocomplete: true},
			}},
			{Type: sub, Name: "list", Description: "List the characters you can play with"},
			{Type: sub, Name: "show", Description: "Show who plays in this channel"},
			{Type: sub, Name: "mention", Description: "Answer only messages that mention or reply to the character", Options: []*discordgo.ApplicationCommandOption{
				{Type: str, Name: "mode", Description: "on: only mentions and replies; off: every message", Required: true,
					Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "on", Value: "on"}, {Name: "off", Value: "off"}}},
			}},
		},
		"forget": {
			{Type: str, Name: "chat", Description: "A chat id from /chats (default: this channel's current chat)"},
		},
		"persona": {
			{Type: str, Name: "name", Description: "What the character should call you", MaxLength: 60},
			{Type: str, Name: "description", Description: "How the character should see you", MaxLength: 2000},
		},
		"memory": {
			{Type: str, Name: "action", Description: "What to do with the memory (empty: show it)"},
		},
		"cast": {
			{Type: sub, Name: "list", Description: "List the characters of this scene"},
			{Type: sub, Name: "add", Description: "Bring a character into the scene", Options: []*discordgo.ApplicationCommandOption{
				{Type: str, Name: "card", Description: "The card's name or id", Required: true, Autocomplete: true},
			}},
			{Type: sub, Name: "remove", Description: "Take a character out of the cast", Options: []*discordgo.ApplicationCommandOption{
				{Type: str, Name: "name", Description: "The character's name", Required: true},
			}},
			{Type: sub, Name: "away", Description: "Mark a character away: it perceives nothing until it is back", Options: []*discordgo.ApplicationCommandOption{
				{Type: str, Name: "name", Description: "The character's name", Required: true},
			}},
			{Type: sub, Name: "back", Description: "Bring an away character back into the scene", Options: []*discordgo.ApplicationCommandOption{
				{Type: str, Name: "name", Description: "The character's name", Required: true},
			}},
		},
		"whisper": {
			{Type: str, Name: "name", Description: "The character who hears it", Required: true, MaxLength: 80},
			{Type: str, Name: "text", Description: "What you whisper", Required: true, MaxLength: 2000},
		},
		"swipe": {
			{Type: str, Name: "n", Description: "Show alternative N again (1 = the first); empty: write a new one", MaxLength: 6},
		},
		"belief": {
			{Type: str, Name: "action", Description: "forget BELIEF-ID", Required: true},
		},
		"voice": {
			{Type: str, Name: "state", Description: "on: replies are also spoken; off: text only (empty: show the setting)",
				Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "on", Value: "on"}, {Name: "off", Value: "off"}}},
		},
		"picture": {
			{Type: str, Name: "what", Description: "What the picture should show (empty: the scene as it is)", MaxLength: 300},
		},
	}
	var out []*discordgo.ApplicationCommand
	for _, c := range bot.Commands {
		out = append(out, &discordgo.ApplicationCommand{
			Name: c.Name, Description: c.Description, Options: options[c.Name],
			Contexts: &contexts, IntegrationTypes: &installs,
		})
	}
	return out
}

// commandOf turns a slash command's data into the pipeline's command.
func commandOf(d discordgo.ApplicationCommandInteractionData) bot.Command {
	cmd := bot.Command{Name: d.Name}
	opt := func(opts []*discordgo.ApplicationCommandInteractionDataOption, name string) string {
		for _, o := range opts {
			if o.Name == name && o.Type == discordgo.ApplicationCommandOptionString {
				return strings.TrimSpace(o.StringValue())
			}
		}
		return ""
	}
	switch d.Name {
	case "card", "cast":
		if len(d.Options) > 0 {
			s := d.Options[0]
			cmd.Args = s.Name
			for _, name := range []string{"card", "mode", "name"} {
				if v := opt(s.Options, name); v != "" {
					cmd.Args += " " + v
				}
			}
		}
	case "forget":
		cmd.Args = opt(d.Options, "chat")
	case "persona":
		name, desc := opt(d.Options, "name"), opt(d.Options, "description")
		cmd.Args = name
		if desc != "" {
			cmd.Args = name + " | " + desc
		}
	case "memory", "belief":
		cmd.Args = opt(d.Options, "action")
	case "swipe":
		cmd.Args = opt(d.Options, "n")
	case "voice":
		cmd.Args = opt(d.Options, "state")
	case "picture":
		cmd.Args = opt(d.Options, "what")
	case "whisper":
		cmd.Args = strings.TrimSpace(opt(d.Options, "name") + " " + opt(d.Options, "text"))
	}
	return cmd
}

// public reports whether a command's answer is for the whole channel: the
// ones that change who says what there (a change of the cast included),
// and /picture, whose picture enters the channel's story.
// Everything else — /memory and /whisper among them — is answered to the
// caller alone.
func public(cmd bot.Command) bool {
	switch cmd.Name {
	case "new", "regen", "swipe", "picture":
		return true
	case "card":
		return strings.HasPrefix(cmd.Args, "set")
	case "cast":
		return castChange(cmd)
	}
	return false
}

// castChange reports whether cmd changes the cast (anything but a list).
func castChange(cmd bot.Command) bool {
	sub, _, _ := strings.Cut(cmd.Args, " ")
	return cmd.Name == "cast" && sub != "" && sub != "list"
}

// canManage reports whether the caller may run admin commands: Manage
// Channels for /card set and changes of the cast, Manage Channels or
// Manage Server for /new (it ends the channel's shared chat), Manage
// Messages for everything else (a /regen of another's reply among them),
// from the member's permissions in the channel, or a role in
// discord.admin_roles (matched by id; names were resolved to ids at
// start). In DMs the caller owns the space.
func (a *Adapter) canManage(s *discordgo.Session, i *discordgo.Interaction, cmd bot.Command) bool {
	m := i.Member
	if m == nil {
		return true
	}
	need := int64(discordgo.PermissionManageMessages)
	switch {
	case (cmd.Name == "card" && strings.HasPrefix(cmd.Args, "set")) || castChange(cmd):
		need = discordgo.PermissionManageChannels
	case cmd.Name == "new":
		need = discordgo.PermissionManageChannels | discordgo.PermissionManageGuild
	}
	if m.Permissions&(discordgo.PermissionAdministrator|need) != 0 {
		return true
	}
	for _, id := range m.Roles {
		if a.isAdminRole(id) {
			return true
		}
	}
	return false
}

// autocomplete offers the library's cards whose name or id contains what was
// typed, in any case; none where the bot may not play.
func (a *Adapter) autocomplete(s *discordgo.Session, i *discordgo.Interaction) {
	typed := ""
	var walk func([]*discordgo.ApplicationCommandInteractionDataOption)
	walk = func(opts []*discordgo.ApplicationCommandInteractionDataOption) {
		for _, o := range opts {
			if o.Focused {
				typed, _ = o.Value.(string)
			}
			walk(o.Options)
		}
	}
	walk(i.ApplicationCommandData().Options)
	choices := cardChoices(a.p.Cards(), typed)
	if !a.allowed(a.place(a.work, s, i.GuildID, i.ChannelID)) {
		choices = []*discordgo.ApplicationCommandOptionChoice{}
	}
	err := s.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices},
	}, discordgo.WithContext(a.work))
	if err != nil {
		a.log.Warn("autocomplete", "err", err)
	}
}

// cardChoices lists up to 25 cards matching typed.
func cardChoices(lib *cards.Library, typed string) []*discordgo.ApplicationCommandOptionChoice {
	q := strings.ToLower(strings.TrimSpace(typed))
	choices := []*discordgo.ApplicationCommandOptionChoice{}
	for _, c := range lib.List() {
		if q != "" && !strings.Contains(strings.ToLower(c.Name), q) && !strings.Contains(c.ID, q) {
			continue
		}
		name := c.Name
		if !strings.EqualFold(c.Name, c.ID) {
			name += " (" + c.ID + ")"
		}
		name = troupetext.Ellipsis(name, 100)
		choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: name, Value: c.ID})
		if len(choices) == 25 {
			break
		}
	}
	return choices
}
