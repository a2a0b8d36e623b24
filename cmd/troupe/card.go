package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"troupe/cards"
	"troupe/config"
	"troupe/text"
)

// logCardFailures names each file of the card folder that did not load,
// and each lorebook key of a card that does not compile.
func logCardFailures(log *slog.Logger, lib *cards.Library) {
	for _, f := range lib.Failed() {
		log.Warn("card file skipped", "file", f.Path, "err", f.Err)
	}
	for _, k := range lib.List() {
		for _, warn := range k.Book.Warnings() {
			log.Warn("card lorebook key", "card_id", k.ID, "problem", warn)
		}
	}
}

func (c *cli) cardCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "card", Short: "List, show, import and export character cards"}
	cmd.AddCommand(c.cardListCmd(), c.cardShowCmd(), c.cardImportCmd(), c.cardExportCmd())
	return cmd
}

// cardDir is the card folder: --dir, else cards.dir of the configuration.
// A folder that does not exist is an error (not an empty library), with the
// nearest folders there are.
func (c *cli) cardDir(dir string) (string, error) {
	if dir != "" {
		if err := checkFolder(dir); err != nil {
			return "", usageError{fmt.Errorf("--dir: %w", err)}
		}
		return dir, nil
	}
	cfg, err := c.load()
	if err != nil {
		return "", err
	}
	if err := checkFolder(cfg.Cards.Dir); err != nil {
		return "", &config.Error{Key: "cards.dir", Problem: err.Error()}
	}
	return cfg.Cards.Dir, nil
}

// cardLine is one card of `troupe card list --json`.
type cardLine struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// File is the card's file name; SharedStem, when set, is the stem it
	// shares with another file, so its id comes from its whole name.
	File        string `json:"file"`
	SharedStem  string `json:"shared_stem,omitempty"`
	Format      string `json:"format"`
	Spec        string `json:"spec"`
	Language    string `json:"language"`
	Greetings   int    `json:"greetings"`
	LoreEntries int    `json:"lore_entries"`
	Image       bool   `json:"image"`
}

type failedLine struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

func (c *cli) cardListCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the cards of the card folder, and the files that did not load with why",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := c.cardDir(dir)
			if err != nil {
				return err
			}
			lib, err := cards.LoadLibrary(d, "")
			if err != nil {
				return err
			}
			var out struct {
				Cards  []cardLine   `json:"cards"`
				Failed []failedLine `json:"failed"`
			}
			out.Cards, out.Failed = []cardLine{}, []failedLine{}
			for _, k := range lib.List() {
				greetings := len(k.AlternateGreetings)
				if k.FirstMes != "" {
					greetings++
				}
				src, _ := lib.Source(k.ID)
				out.Cards = append(out.Cards, cardLine{ID: k.ID, Name: k.Name, File: filepath.Base(src.File), SharedStem: src.SharedStem,
					Format: k.Format, Spec: k.Spec, Language: k.Language, Greetings: greetings, LoreEntries: loreEntries(k), Image: len(k.Image) > 0})
			}
			for _, f := range lib.Failed() {
				out.Failed = append(out.Failed, failedLine{File: filepath.Base(f.Path), Error: failureReason(f)})
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tFORMAT\tSPEC\tLANG\tGREETINGS\tLORE")
			for _, l := range out.Cards {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", l.ID, l.Name, l.Format, l.Spec, l.Language, l.Greetings, l.LoreEntries)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			writeSharedStems(c.stdout, out.Cards)
			if len(out.Failed) > 0 {
				fmt.Fprintf(c.stdout, "\n%d file(s) did not load:\n", len(out.Failed))
				for _, f := range out.Failed {
					fmt.Fprintf(c.stdout, "  %s: %s\n", f.File, f.Error)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "card folder (default cards.dir of the configuration)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeSharedStems says which files share a stem, and the id each has
// instead.
func writeSharedStems(w io.Writer, lines []cardLine) {
	byStem := map[string][]cardLine{}
	var stems []string
	for _, l := range lines {
		if l.SharedStem == "" {
			continue
		}
		if byStem[l.SharedStem] == nil {
			stems = append(stems, l.SharedStem)
		}
		byStem[l.SharedStem] = append(byStem[l.SharedStem], l)
	}
	if len(stems) == 0 {
		return
	}
	sort.Strings(stems)
	fmt.Fprintln(w, "\nFiles that share a stem, each with an id of its own:")
	for _, s := range stems {
		ls := byStem[s]
		sort.Slice(ls, func(i, j int) bool { return ls[i].File < ls[j].File })
		parts := make([]string, len(ls))
		for i, l := range ls {
			parts[i] = fmt.Sprintf("%s is %s", l.File, l.ID)
		}
		fmt.Fprintf(w, "  %q: %s\n", s, strings.Join(parts, ", "))
	}
}

// failureReason is why a file did not load, without its path repeated.
func failureReason(f cards.Failure) string {
	return strings.TrimPrefix(f.Err.Error(), f.Path+": ")
}

func loreEntries(k cards.Card) int {
	if k.Book == nil {
		return 0
	}
	return len(k.Book.Entries)
}

// findCard is a card file, or a card of the folder by id or name.
func (c *cli) findCard(dir, key string) (cards.Card, error) {
	if st, err := os.Stat(key); err == nil && !st.IsDir() {
		return cards.LoadCard(key)
	}
	d, err := c.cardDir(dir)
	if err != nil {
		return cards.Card{}, err
	}
	lib, err := cards.LoadLibrary(d, "")
	if err != nil {
		return cards.Card{}, err
	}
	if k, ok := lib.Find(key); ok {
		return k, nil
	}
	for _, f := range lib.Failed() {
		if strings.EqualFold(cards.CardIDFromPath(f.Path), key) {
			return cards.Card{}, f.Err
		}
	}
	return cards.Card{}, usageError{fmt.Errorf("no card %q in %s, and no such file", key, d)}
}

func (c *cli) cardShowCmd() *cobra.Command {
	var dir, user string
	cmd := &cobra.Command{
		Use:   "show ID|FILE",
		Short: "Print what a prompt would use of a card",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := c.findCard(dir, args[0])
			if err != nil {
				return err
			}
			worlds, errs := cards.LoadWorldsFrom(c.worldDirs(dir, args[0])...)
			return showCard(c.stdout, k, user, worlds, errs)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "card folder (default cards.dir of the configuration)")
	cmd.Flags().StringVar(&user, "user", "User", "the name {{user}} stands for")
	return cmd
}

// worldDirs are the folders of world files for a card named by key: those
// of --dir, else of the configuration (cards.worlds_dir, else worlds/
// inside or beside cards.dir), then, for a card file, those beside the file.
func (c *cli) worldDirs(dir, key string) []string {
	var dirs []string
	if dir != "" {
		dirs = cards.WorldDirs(dir, "")
	} else if cfg, err := c.load(); err == nil {
		dirs = cards.WorldDirs(cfg.Cards.Dir, cfg.Cards.WorldsDir)
	}
	if st, err := os.Stat(key); err == nil && !st.IsDir() {
		for _, d := range cards.WorldDirs(filepath.Dir(key), "") {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// showCard prints a card's fields as the prompt uses them, the world it
// links, and the warnings about its lore: a linked world not found, a key
// that does not compile, a world file that did not load (worldErrs).
func showCard(w io.Writer, k cards.Card, user string, worlds *cards.Worlds, worldErrs []error) error {
	x := func(s string) string { return strings.TrimSpace(cards.Expand(s, k.CharName(), user)) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s (id %s): %s card %s, language %s\n", k.Name, k.ID, k.Format, k.Spec, k.Language)
	if k.Nickname != "" {
		fmt.Fprintf(&b, "{{char}} is %s\n", k.Nickname)
	}
	switch {
	case k.Avatar != "":
		fmt.Fprintf(&b, "avatar: %s\n", k.Avatar)
	case len(k.Image) > 0:
		fmt.Fprintf(&b, "avatar: the card's image (%d KB)\n", (len(k.Image)+1023)/1024)
	}
	section := func(title, text string) {
		if text = x(text); text != "" {
			fmt.Fprintf(&b, "\n== %s\n%s\n", title, text)
		}
	}
	section("system prompt", k.SystemPrompt)
	section("description", k.Description)
	section("personality", k.Personality)
	section("scenario", k.Scenario)
	for i, e := range k.Examples {
		section(fmt.Sprintf("example dialogue %d of %d", i+1, len(k.Examples)), e)
	}
	section("post-history instructions", k.PostHistoryInstructions)
	if k.DepthPrompt != nil {
		section(fmt.Sprintf("character's note (depth %d, %s)", k.DepthPrompt.Depth, k.DepthPrompt.Role), k.DepthPrompt.Prompt)
	}
	section("greeting", k.FirstMes)
	for i, g := range k.AlternateGreetings {
		section(fmt.Sprintf("alternate greeting %d", i+1), g)
	}
	for i, g := range k.GroupGreetings {
		section(fmt.Sprintf("group greeting %d (chats with several characters)", i+1), g)
	}
	books, missing := worlds.BooksOf(k)
	var warnings []string
	if k.World != "" {
		fmt.Fprintf(&b, "\n== world info\n")
		if wb, ok := worlds.Get(k.World); ok {
			fmt.Fprintf(&b, "%s: %d entries, from %s\n", wb.Name, len(wb.Entries), worlds.Path(wb.Name))
			if own := loreEntries(k); own > 0 {
				shared := own
				if books[0] != wb {
					shared = own - len(books[0].Entries)
				}
				if shared > 0 {
					fmt.Fprintf(&b, "%d of the card's own %d lore entries are the world's too; they go in once, as the world has them\n", shared, own)
				}
			}
			for _, warn := range wb.Warnings() {
				warnings = append(warnings, "world "+wb.Name+": "+warn)
			}
		} else {
			fmt.Fprintf(&b, "%s: not found\n", k.World)
		}
	}
	if missing != "" {
		where := "no worlds folder"
		if dirs := worlds.Dirs(); len(dirs) > 0 {
			where = strings.Join(dirs, ", ")
		}
		warnings = append(warnings, fmt.Sprintf("the card links the world %q, which is not in %s: its lore is left out (put %s.json there, or troupe card import it)", missing, where, missing))
	}
	for _, warn := range k.Book.Warnings() {
		warnings = append(warnings, "card lore: "+warn)
	}
	for _, err := range worldErrs {
		warnings = append(warnings, "world file skipped: "+err.Error())
	}
	if k.Book != nil && len(k.Book.Entries) > 0 {
		fmt.Fprintf(&b, "\n== lore: %d entries\n", len(k.Book.Entries))
		for _, e := range k.Book.Entries {
			keys := strings.Join(e.Keys, ", ")
			if e.Constant {
				keys = "(always)"
			}
			fmt.Fprintf(&b, "- %s: %s\n", keys, text.Clip(strings.Join(strings.Fields(x(e.Content)), " "), 100))
		}
	}
	if len(warnings) > 0 {
		fmt.Fprintf(&b, "\n== warnings\n")
		for _, warn := range warnings {
			fmt.Fprintf(&b, "- %s\n", warn)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (c *cli) cardImportCmd() *cobra.Command {
	var dir, as string
	var world bool
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Copy card files (JSON, PNG, CHARX) into the card folder under a stable id, and world-info files into the worlds folder",
		Long: `Copy card files (JSON, PNG, CHARX) into the card folder under a stable id.
A SillyTavern world-info file (entries and no name) goes into the worlds
folder instead (cards.worlds_dir, else worlds/ inside or beside the card
folder, created inside when there is none) as NAME.json, named after its
file or --as: a card links a world by that name. --world takes every file
as a world-info file.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if as != "" && len(args) > 1 {
				return usageError{errors.New("--as names one world file; give one file with it")}
			}
			d, err := c.cardDir(dir)
			if err != nil {
				return err
			}
			worldsDir := ""
			if dir == "" {
				if cfg, err := c.load(); err == nil {
					worldsDir = cfg.Cards.WorldsDir
				}
			}
			var failed []string
			for _, src := range args {
				im, err := cards.ImportFile(d, worldsDir, src, as, world)
				if err != nil {
					fmt.Fprintf(c.stderr, "%s: not imported: %v\n", src, err)
					failed = append(failed, src)
					continue
				}
				if b := im.World; b != nil {
					fmt.Fprintf(c.stdout, "%s: imported as world %s (%d entries) in %s\n", src, b.Name, len(b.Entries), im.WorldFile)
					for _, warn := range b.Warnings() {
						fmt.Fprintf(c.stderr, "%s: warning: %s\n", src, warn)
					}
					continue
				}
				k := im.Card
				fmt.Fprintf(c.stdout, "%s: imported as %s (%s)\n", src, k.ID, k.Name)
				for _, warn := range k.Book.Warnings() {
					fmt.Fprintf(c.stderr, "%s: warning: %s\n", src, warn)
				}
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d file(s) not imported: %s", len(failed), len(args), strings.Join(failed, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "card folder (default cards.dir of the configuration)")
	cmd.Flags().BoolVar(&world, "world", false, "take every file as a world-info file")
	cmd.Flags().StringVar(&as, "as", "", "the name a world file is imported under (default its file name); cards link worlds by it")
	return cmd
}

func (c *cli) cardExportCmd() *cobra.Command {
	var dir, format, out string
	cmd := &cobra.Command{
		Use:   "export ID|FILE --format png|json",
		Short: "Write a card as a V3 card file (PNG with chara and ccv3 chunks, or JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "png" && format != "json" {
				return usageError{fmt.Errorf("--format is %q; it must be png or json", format)}
			}
			k, err := c.findCard(dir, args[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = k.ID + "." + format
			}
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, os.ErrExist) {
				return usageError{fmt.Errorf("%s exists; give another --out", out)}
			}
			if err != nil {
				return err
			}
			if format == "png" {
				err = k.WritePNG(f)
			} else {
				var data []byte
				if data, err = k.V3JSON(); err == nil {
					_, err = f.Write(append(data, '\n'))
				}
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(out)
				return err
			}
			fmt.Fprintf(c.stdout, "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "card folder (default cards.dir of the configuration)")
	cmd.Flags().StringVar(&format, "format", "png", "png or json")
	cmd.Flags().StringVar(&out, "out", "", "file to write (default ID.png or ID.json; never overwritten)")
	return cmd
}
