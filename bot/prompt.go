package bot

import (
	"encoding/json"

	"troupe/cards"
	"troupe/models"
)

// cardRow is the stored form of a card.
func cardRow(c cards.Card) models.Card {
	data, _ := json.Marshal(c)
	return models.Card{ID: c.ID, Name: models.FitName(c.Name, models.NameSize), Language: c.Language, Data: string(data)}
}
