package llm

import (
	"errors"
	"fmt"
	"strings"

	oai "github.com/sashabaranov/go-openai"
)

// withImages turns the last user message of msgs into a text part (none
// when it has no text) and one image part per data URL of images, as vision models take pictures. The
// other messages stay plain text. It fails when images has a URL that is
// not a data URL of an image (the pipeline sends only pictures it has
// downloaded and checked; a remote URL would be fetched by the provider)
// or when no user message carries them.
func withImages(msgs []oai.ChatCompletionMessage, images []string) error {
	if len(images) == 0 {
		return nil
	}
	last := -1
	for i, m := range msgs {
		if m.Role == oai.ChatMessageRoleUser {
			last = i
		}
	}
	if last < 0 {
		return errors.New("images but no user message to carry them")
	}
	parts := make([]oai.ChatMessagePart, 0, 1+len(images))
	if msgs[last].Content != "" {
		// go-openai leaves an empty text out, and a text part without text
		// is refused: a message of pictures only has none.
		parts = append(parts, oai.ChatMessagePart{Type: oai.ChatMessagePartTypeText, Text: msgs[last].Content})
	}
	for i, u := range images {
		if !strings.HasPrefix(u, "data:image/") {
			return fmt.Errorf("image %d is not a data URL of an image", i+1)
		}
		parts = append(parts, oai.ChatMessagePart{
			Type:     oai.ChatMessagePartTypeImageURL,
			ImageURL: &oai.ChatMessageImageURL{URL: u, Detail: oai.ImageURLDetailAuto},
		})
	}
	// go-openai refuses a message with both Content and MultiContent.
	msgs[last].Content = ""
	msgs[last].MultiContent = parts
	return nil
}
