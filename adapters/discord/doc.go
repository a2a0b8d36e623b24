// Package discord is troupe's Discord adapter. It connects to the gateway
// with discordgo, turns the messages of bound channels, threads and (when
// allowed) direct messages into bot.Inbound messages for the shared pipeline,
// offers the pipeline's commands as slash commands, and renders what the
// pipeline writes.
//
// The engine decides, per message, whether a channel plays (the adapter
// tells it a thread's parent and whether the message mentions the bot or
// replies to the character); the adapter hands every person's message over
// with one call, in the order the gateway delivered it among its channel's
// messages, commands and edits. Each channel's events are submitted on a
// goroutine of their own, so a message whose attachments take a while to
// read holds up neither the gateway nor other channels.
//
// Which messages count: in a guild, a channel bound to a card (with /card
// set) and every thread under it (a thread is its own channel and chat); in
// a channel set to mention-only, only messages that mention the bot or reply
// to the character; direct messages when discord.allow_dms is on (their
// space is the user). Messages of bots, of any webhook (the character's own
// included) and of the bot itself never count, and discord.allowed_guilds
// and discord.allowed_channels narrow everything.
//
// Spaces follow audiences (discord.space). With "audience", the default, a
// guild's public channels share the guild's space, and a channel @everyone
// cannot view (its overwrite for the @everyone role, whose id is the
// guild's, denies VIEW_CHANNEL, or the role lacks it) or a private thread is
// a space of its own; a public thread has its parent's audience. "channel"
// gives each channel its own space, "guild" one per guild. The adapter reads
// channels and the @everyone role from the gateway's state (REST for a
// channel the state lacks), remembers what it found until CHANNEL_UPDATE,
// THREAD_UPDATE or @everyone's GUILD_ROLE_UPDATE, and plays nowhere whose
// audience it could not look up (unless one space holds the whole guild).
// A channel whose space changes (made private or public) starts a new chat
// in its new space; its earlier chats stay in the old one.
//
// Scenes: each cast member speaks under its own name and avatar, one reply
// after the other, each its own message(s); a reply to a message of one of
// troupe's webhooks in the channel addresses the character it was posted as
// (bot.Inbound.Addressed). /whisper and its answer reach the writer alone
// (ephemeral), as does /memory.
//
// How the character speaks: through one webhook per channel, created on first
// use and reused (a thread uses its parent's webhook with thread_id), with the
// card's name and avatar; where the bot may not manage webhooks, and in direct
// messages, as the bot with the card's name in bold. A typing indicator runs
// until the first text; the first text is posted at once and then edited at
// most once a second; the reply ends with a final edit. Replies longer than
// Discord's 2000 characters are split with bot.Split. Rate limits are waited
// out by discordgo; a reply that still cannot be posted is reported to the
// pipeline as an error (which logs it with the chat id), logged here with the
// channel id, and announced in the channel with a short notice when possible.
//
// Edits and deletes: Discord messages are stored as they were first sent.
// An edit of a message still waiting for its turn (a reply to earlier
// messages is being written) replaces the text its turn will use; edits
// after its turn began are ignored (use /regen).
// Deleting a message, the character's included, changes no memory: use
// /regen or /forget.
//
// Media: a message's attachments go to the pipeline as bot.Inbound.Media
// — pictures (image/*), a voice message's recording (flag
// IS_VOICE_MESSAGE) as a voice note, other sound files, and text files
// (.txt, .md, .json); anything else is left out — followed by its embeds'
// pictures, only those whose URL is on the file hosts. Every download goes
// through a media.Fetcher that reaches only discord.cdn_base_url (with
// Discord's media proxy when that is Discord's own CDN), so no link in a
// message makes troupe fetch from elsewhere. A message with media and no
// text plays. Embeds Discord adds later (MESSAGE_UPDATE, when it unfurls a
// link) are not read. Files troupe sends (a spoken reply, a /picture) are
// attachments: a message's reply posts them like its text, through the
// webhook as the character or as the bot; a slash command answers with
// them (a spoken reply goes where its text went); a file over Discord's
// upload limit (10 MiB) is refused with media.ErrTooLarge.
//
// Endpoints: discord.api_base_url sends every REST call to
// <base>api/v10/… (the gateway address is whatever GET <base>api/v10/gateway/bot
// returns), so a proxy or a test server such as package discordtest can stand
// in for Discord. The adapter rewrites its own HTTP client's requests and
// changes none of discordgo's package variables, so several adapters in one
// process may talk to different servers.
package discord
