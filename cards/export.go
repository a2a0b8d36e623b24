package cards

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
)

// V3JSON returns the card as a V3 card file. The data object is the one the
// card was read from, so fields troupe does not know and extensions are
// kept; the fields troupe reads are written in their V3 types.
func (c Card) V3JSON() ([]byte, error) {
	data, err := c.v3Data()
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(map[string]any{"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, "", "  ")
}

// v3Data is the card's data object with troupe's fields written over it.
func (c Card) v3Data() (fields, error) {
	data, ok := object(c.Raw)
	if !ok {
		data = fields{}
	}
	set := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("cards: export %s: %w", key, err)
		}
		data[key] = b
		return nil
	}
	list := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	vals := []struct {
		key string
		v   any
	}{
		{"name", c.Name}, {"description", c.Description}, {"personality", c.Personality}, {"scenario", c.Scenario},
		{"first_mes", c.FirstMes}, {"mes_example", c.MesExample}, {"creator_notes", c.CreatorNotes},
		{"system_prompt", c.SystemPrompt}, {"post_history_instructions", c.PostHistoryInstructions},
		{"alternate_greetings", list(c.AlternateGreetings)}, {"tags", list(c.Tags)}, {"creator", c.Creator},
		{"character_version", c.CharacterVersion}, {"group_only_greetings", list(c.GroupGreetings)},
	}
	if c.Nickname != "" {
		vals = append(vals, struct {
			key string
			v   any
		}{"nickname", c.Nickname})
	}
	for _, kv := range vals {
		if err := set(kv.key, kv.v); err != nil {
			return nil, err
		}
	}
	if _, ok := object(data["extensions"]); !ok {
		data["extensions"] = json.RawMessage("{}")
	}
	if _, ok := object(data["character_book"]); !ok && c.Book != nil {
		if err := set("character_book", c.Book); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// WritePNG writes the card as a PNG that SillyTavern reads: the card's
// picture (or a plain one) with a `chara` chunk holding the card as V2 and a
// `ccv3` chunk holding it as V3, both base64 JSON.
func (c Card) WritePNG(w io.Writer) error {
	data, err := c.v3Data()
	if err != nil {
		return err
	}
	v2, err := json.Marshal(map[string]any{"spec": "chara_card_v2", "spec_version": "2.0", "data": data})
	if err != nil {
		return fmt.Errorf("cards: export: %w", err)
	}
	v3, err := json.Marshal(map[string]any{"spec": "chara_card_v3", "spec_version": "3.0", "data": data})
	if err != nil {
		return fmt.Errorf("cards: export: %w", err)
	}
	img := c.Image
	if !bytes.HasPrefix(img, pngSignature) {
		if img, err = plainPNG(); err != nil {
			return err
		}
	}
	// Copy the picture's chunks, with the card's before IEND.
	var out bytes.Buffer
	out.Write(pngSignature)
	rest := img[len(pngSignature):]
	for len(rest) >= 12 {
		n := int(binary.BigEndian.Uint32(rest[:4]))
		if n > len(rest)-12 {
			break
		}
		typ := string(rest[4:8])
		if typ == "IEND" {
			writeTextChunk(&out, "chara", base64.StdEncoding.EncodeToString(v2))
			writeTextChunk(&out, "ccv3", base64.StdEncoding.EncodeToString(v3))
		}
		out.Write(rest[:12+n])
		rest = rest[12+n:]
		if typ == "IEND" {
			break
		}
	}
	if _, err := w.Write(out.Bytes()); err != nil {
		return fmt.Errorf("cards: export: %w", err)
	}
	return nil
}

func writeTextChunk(w *bytes.Buffer, key, text string) {
	body := append(append([]byte(key), 0), text...)
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(body)))
	copy(hdr[4:], "tEXt")
	w.Write(hdr[:])
	w.Write(body)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(body)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	w.Write(sum[:])
}

// plainPNG is the picture of a card that has none: a grey square.
func plainPNG() ([]byte, error) {
	m := image.NewGray(image.Rect(0, 0, 64, 64))
	for i := range m.Pix {
		m.Pix[i] = 0x80
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		return nil, fmt.Errorf("cards: export: %w", err)
	}
	return b.Bytes(), nil
}
