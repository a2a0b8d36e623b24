package web

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"troupe/cards"
	"troupe/models"
)

// cardState is the library the Cards page shows: the one the inspector was
// given, then the card folder as read again after each upload.
type cardState struct {
	mu        sync.RWMutex
	lib       *cards.Library
	worlds    *cards.Worlds
	worldErrs []error
	// upload lets one upload at a time import and reload.
	upload sync.Mutex
}

// maxUploadName bounds an uploaded file's name, in bytes.
const maxUploadName = 200

// maxLoreShown bounds the entries a card's page lists per book.
const maxLoreShown = 1000

// cardRoutes registers the cards pages: the library, a card's lore, upload
// and export.
func (s *Server) cardRoutes() {
	s.cards.lib = s.opt.Cards
	if s.opt.CardsDir != "" {
		s.cards.worlds, s.cards.worldErrs = cards.LoadWorldsFrom(cards.WorldDirs(s.opt.CardsDir, s.opt.WorldsDir)...)
	}
	s.handle("GET /cards", false, s.cardsPage)
	s.handle("GET /cards/{id}", false, s.cardPage)
	s.handle("GET /cards/{id}/export", false, s.cardExport)
	s.handle("POST /cards/upload", true, s.cardUpload)
}

// library returns the current library and worlds.
func (s *Server) library() (*cards.Library, *cards.Worlds, []error) {
	s.cards.mu.RLock()
	defer s.cards.mu.RUnlock()
	return s.cards.lib, s.cards.worlds, s.cards.worldErrs
}

// reloadCards reads the card folder and its worlds again.
func (s *Server) reloadCards() error {
	lib, err := cards.LoadLibrary(s.opt.CardsDir, "")
	if err != nil {
		return err
	}
	worlds, errs := cards.LoadWorldsFrom(cards.WorldDirs(s.opt.CardsDir, s.opt.WorldsDir)...)
	s.cards.mu.Lock()
	defer s.cards.mu.Unlock()
	s.cards.lib, s.cards.worlds, s.cards.worldErrs = lib, worlds, errs
	return nil
}

type cardsView struct {
	// NoLibrary: the inspector was given no library.
	NoLibrary bool
	Cards     []cardRow
	Failed    []failedRow
	Worlds    []worldRow
	WorldErrs []string
	// CanUpload: a card folder to write to.
	CanUpload bool
	// Imported names what the last upload added; Problem why it was refused.
	Imported, Problem string
}

func (cardsView) PageTitle() string { return "Cards" }

type cardRow struct {
	ID, Name, File, SharedStem string
	Format, Spec, Language     string
	Greetings, LoreEntries     int
	World                      string
	WorldMissing, HasFile      bool
	Warnings                   []string
}

type failedRow struct{ File, Error string }

type worldRow struct {
	Name, File string
	Entries    int
	Warnings   []string
}

// row is what the library's table shows of k, as troupe card list does.
func row(lib *cards.Library, worlds *cards.Worlds, k cards.Card) cardRow {
	r := cardRow{ID: k.ID, Name: k.Name, Format: k.Format, Spec: k.Spec, Language: k.Language, World: k.World}
	r.Greetings = len(k.AlternateGreetings)
	if k.FirstMes != "" {
		r.Greetings++
	}
	if k.Book != nil {
		r.LoreEntries = len(k.Book.Entries)
	}
	if src, ok := lib.Source(k.ID); ok {
		r.File, r.SharedStem, r.HasFile = filepath.Base(src.File), src.SharedStem, true
	}
	if k.World != "" {
		if _, ok := worlds.Get(k.World); !ok {
			r.WorldMissing = true
			r.Warnings = append(r.Warnings, fmt.Sprintf("links the world %q, which is not in the worlds folder: its lore is left out", k.World))
		}
	}
	for _, w := range k.Book.Warnings() {
		r.Warnings = append(r.Warnings, "lore: "+w)
	}
	return r
}

// cardsView reads the library into the page's data.
func (s *Server) cardsView() cardsView {
	lib, worlds, worldErrs := s.library()
	v := cardsView{NoLibrary: lib == nil, CanUpload: s.opt.CardsDir != ""}
	if lib == nil {
		return v
	}
	for _, k := range lib.List() {
		v.Cards = append(v.Cards, row(lib, worlds, k))
	}
	for _, f := range lib.Failed() {
		v.Failed = append(v.Failed, failedRow{File: filepath.Base(f.Path), Error: strings.TrimPrefix(f.Err.Error(), f.Path+": ")})
	}
	for _, n := range worlds.Names() {
		b, _ := worlds.Get(n)
		v.Worlds = append(v.Worlds, worldRow{Name: n, File: filepath.Base(worlds.Path(n)), Entries: len(b.Entries), Warnings: b.Warnings()})
	}
	for _, err := range worldErrs {
		v.WorldErrs = append(v.WorldErrs, err.Error())
	}
	return v
}

// cardsPage lists the library: cards with their warnings, the files that
// did not load and why, the worlds; and the upload form.
func (s *Server) cardsPage(w http.ResponseWriter, r *http.Request) {
	v := s.cardsView()
	// After an upload: say what came in, when the library has it.
	if id := r.URL.Query().Get("card"); id != "" {
		for _, c := range v.Cards {
			if c.ID == id {
				v.Imported = "the card " + c.Name + " (id " + c.ID + ")"
			}
		}
	}
	if name := r.URL.Query().Get("world"); name != "" {
		for _, wr := range v.Worlds {
			if wr.Name == name {
				v.Imported = "the world " + wr.Name
			}
		}
	}
	s.render(w, r, http.StatusOK, "cards", v)
}

type cardView struct {
	Card  cardRow
	Books []bookView
	// Fired are the entries the card's latest traced replies held.
	Fired []models.LoreFiring
}

// loreFiredTurns is how many of a card's latest traced replies its page
// reads for the lore that fired.
const loreFiredTurns = 200

func (v cardView) PageTitle() string { return "Card " + v.Card.Name }

type bookView struct {
	// Title says whose book it is: the card's own, or its linked world.
	Title   string
	File    string
	Entries []entryView
	// More counts the entries not shown.
	More int
}

type entryView struct {
	UID, Comment      string
	Keys, Secondary   []string
	Constant, Enabled bool
	Content           string
}

func bookOf(title, file string, b *cards.Book) bookView {
	bv := bookView{Title: title, File: file}
	for i := range b.Entries {
		if i == maxLoreShown {
			bv.More = len(b.Entries) - i
			break
		}
		e := &b.Entries[i]
		bv.Entries = append(bv.Entries, entryView{UID: e.UID, Comment: e.Comment, Keys: e.Keys, Secondary: e.Secondary,
			Constant: e.Constant, Enabled: e.Enabled, Content: e.Content})
	}
	return bv
}

// cardPage shows one card of the library and its lore: the entries of its
// own book and of the world it links, with their keys.
func (s *Server) cardPage(w http.ResponseWriter, r *http.Request) {
	lib, worlds, _ := s.library()
	if lib == nil {
		s.notFound(w, r)
		return
	}
	k, ok := lib.Get(r.PathValue("id"))
	if !ok {
		s.notFound(w, r)
		return
	}
	v := cardView{Card: row(lib, worlds, k)}
	if k.Book != nil && len(k.Book.Entries) > 0 {
		v.Books = append(v.Books, bookOf("The card's own lorebook", v.Card.File, k.Book))
	}
	if b, ok := worlds.Get(k.World); ok {
		v.Books = append(v.Books, bookOf("World "+b.Name, filepath.Base(worlds.Path(b.Name)), b))
	}
	if len(v.Books) > 0 {
		fired, err := s.opt.Store.LoreFired(r.Context(), k.ID, loreFiredTurns)
		if err != nil {
			s.internal(w, r, "the lore that fired", err)
			return
		}
		v.Fired = fired
	}
	s.render(w, r, http.StatusOK, "card", v)
}

// cardTypes are the content types of card files by extension.
var cardTypes = map[string]string{".png": "image/png", ".json": "application/json", ".charx": "application/zip"}

// cardExport downloads a card's file as it is on disk.
func (s *Server) cardExport(w http.ResponseWriter, r *http.Request) {
	lib, _, _ := s.library()
	if lib == nil {
		s.notFound(w, r)
		return
	}
	id := r.PathValue("id")
	src, ok := lib.Source(id)
	if !ok {
		if _, known := lib.Get(id); known {
			s.fail(w, r, http.StatusNotFound, "This card was not loaded from a file of the card folder: there is no file to download.")
			return
		}
		s.notFound(w, r)
		return
	}
	f, err := os.Open(src.File)
	if err != nil {
		s.internal(w, r, "the card's file", err)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		s.internal(w, r, "the card's file", err)
		return
	}
	name := filepath.Base(src.File)
	ctype, ok := cardTypes[strings.ToLower(filepath.Ext(name))]
	if !ok {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	http.ServeContent(w, r, name, info.ModTime(), f)
}

// cardUpload imports an uploaded card or world file as troupe card import
// does (cards.ImportFile: read whole before anything is written), then reads
// the card folder again.
func (s *Server) cardUpload(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, msg string) {
		v := s.cardsView()
		v.Problem = msg
		s.render(w, r, status, "cards", v)
	}
	if s.opt.CardsDir == "" {
		refuse(http.StatusConflict, "Uploads are off: the inspector was given no card folder.")
		return
	}
	file, head, err := r.FormFile("file")
	if err != nil {
		refuse(http.StatusBadRequest, "Choose a file to upload.")
		return
	}
	defer file.Close()
	name := uploadName(head.Filename)
	tmp, err := os.MkdirTemp("", "troupe-upload-")
	if err != nil {
		s.internal(w, r, "a place for the upload", err)
		return
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, name)
	if err := writeFile(path, file); err != nil {
		s.internal(w, r, "the upload", err)
		return
	}
	s.cards.upload.Lock()
	defer s.cards.upload.Unlock()
	im, err := cards.ImportFile(s.opt.CardsDir, s.opt.WorldsDir, path, strings.TrimSpace(r.PostFormValue("as")), r.PostFormValue("world") != "")
	if err != nil {
		// The messages name the file by its temporary path: name it as uploaded.
		msg := strings.ReplaceAll(err.Error(), path, name)
		refuse(http.StatusUnprocessableEntity, name+" was not imported: "+strings.ReplaceAll(msg, tmp+string(filepath.Separator), ""))
		return
	}
	if err := s.reloadCards(); err != nil {
		s.internal(w, r, "the card folder", err)
		return
	}
	q := url.Values{"card": {im.Card.ID}}
	if im.World != nil {
		q = url.Values{"world": {im.World.Name}}
		s.log.Info("inspector: world uploaded", "world", im.World.Name, "file", im.WorldFile)
	} else {
		s.log.Info("inspector: card uploaded", "card_id", im.Card.ID)
	}
	http.Redirect(w, r, "/cards?"+q.Encode(), http.StatusSeeOther)
}

// uploadName is the base of an uploaded file's name, as a browser sends it
// (some send a whole Windows path); Import derives the card's id from it.
func uploadName(name string) string {
	name = filepath.Base(filepath.FromSlash(strings.ReplaceAll(name, `\`, "/")))
	name = strings.Map(func(r rune) rune {
		if r == 0 || r == '/' || r == filepath.Separator {
			return -1
		}
		return r
	}, name)
	ext := strings.ToLower(filepath.Ext(name))
	if len(ext) > 16 {
		ext = ""
	}
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, ".") {
		return "upload" + ext
	}
	if len(name) > maxUploadName {
		// A file system takes 255 bytes; the id Import gives is shorter still.
		stem := strings.ToValidUTF8(name[:maxUploadName-len(ext)], "")
		name = stem + ext
	}
	return name
}

func writeFile(path string, src io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
