package prompt

// PlayersHeader is the opening of the players note in a language, for the
// tests outside the package.
func PlayersHeader(lang string) string { return wordingFor(lang).playersHeader }
