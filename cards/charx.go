package cards

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// MaxCHARXFiles bounds the files of a CHARX archive (a card with many
// expression sprites has a few hundred).
const MaxCHARXFiles = 4000

// ReadCHARX reads a CHARX card: a zip archive with card.json (a V3 card) and
// its assets. The icon asset (an embeded:// or embedded:// uri) becomes the
// card's Image when it is at most MaxImageBytes. Only card.json and the icon
// are unpacked, each within its limit whatever the archive claims, so a zip
// bomb is refused after reading at most that much. Errors wrap
// ErrCardInvalid.
func ReadCHARX(r io.ReaderAt, size int64) (Card, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return Card{}, fmt.Errorf("%w: not a CHARX (zip) archive: %v", ErrCardInvalid, err)
	}
	if len(zr.File) > MaxCHARXFiles {
		return Card{}, fmt.Errorf("%w: the CHARX holds %d files; at most %d are read", ErrTooLarge, len(zr.File), MaxCHARXFiles)
	}
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[strings.TrimPrefix(path.Clean("/"+f.Name), "/")] = f
	}
	cf, ok := files["card.json"]
	if !ok {
		return Card{}, fmt.Errorf("%w: a zip without card.json, not a CHARX", ErrNotCard)
	}
	data, err := unzipFile(cf, MaxCardJSON)
	if err != nil {
		return Card{}, err
	}
	c, err := ParseCard(data)
	if err != nil {
		return Card{}, fmt.Errorf("CHARX card.json: %w", err)
	}
	c.Format = "charx"
	icon := iconPath(c)
	if _, ok := files[icon]; !ok {
		// An icon the card does not point at (a "ccdefault:" uri): the
		// first picture in assets/icon/.
		icon = ""
		for _, f := range zr.File {
			p := strings.TrimPrefix(path.Clean("/"+f.Name), "/")
			if icon == "" && strings.HasPrefix(p, "assets/icon/") && !strings.HasSuffix(p, "/") {
				icon = p
			}
		}
	}
	if f, ok := files[icon]; ok {
		if img, err := unzipFile(f, MaxImageBytes); err == nil {
			c.Image = img
		}
	}
	return c, nil
}

// unzipFile unpacks one file of at most limit bytes.
func unzipFile(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("%w: %s unpacks to %s; the limit is %s", ErrTooLarge, f.Name, megabytes64(int64(min(f.UncompressedSize64, 1<<40))), megabytes64(limit))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCardInvalid, f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s unpacks beyond %s (the archive said %d bytes)", ErrTooLarge, f.Name, megabytes64(limit), f.UncompressedSize64)
	}
	if errors.Is(err, zip.ErrFormat) {
		// archive/zip stops a file that unpacks beyond its stated size.
		return nil, fmt.Errorf("%w: %s unpacks to other than the %d bytes the archive says: a damaged or forged archive", ErrCardInvalid, f.Name, f.UncompressedSize64)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCardInvalid, f.Name, err)
	}
	return data, nil
}

// iconPath is the archive path of the card's icon asset ("main" first).
func iconPath(c Card) string {
	body, ok := object(c.Raw)
	if !ok {
		return ""
	}
	assets, err := body.list("assets")
	if err != nil {
		return ""
	}
	best := ""
	for _, a := range assets {
		typ, _ := a.str("type")
		uri, _ := a.str("uri")
		name, _ := a.str("name")
		if typ != "icon" {
			continue
		}
		p, ok := strings.CutPrefix(uri, "embeded://")
		if !ok {
			p, ok = strings.CutPrefix(uri, "embedded://")
		}
		if !ok {
			continue
		}
		p = strings.TrimPrefix(path.Clean("/"+p), "/")
		if name == "main" {
			return p
		}
		if best == "" {
			best = p
		}
	}
	return best
}
