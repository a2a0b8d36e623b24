package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"troupe/belief"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/models"
)

// sceneReflection is reflection.* for the 60-turn scene: automatic runs at
// least ten turns apart (the fake recorder moves the story a day a batch,
// a scene change), both members each run.
var sceneReflection = memory.ReflectConfig{
	Trigger:   belief.TriggerConfig{Auto: true, EveryTurns: 12, MinTurns: 10, PerRun: 2, MinNew: 3},
	MaxChecks: 2, PivotalImportance: 8,
}

// TestReflectSceneEachCitesItsOwnPerceptions is issue 17's 60-turn scene:
// Maren and 苏砚 in one channel on the real pipeline, job queue and worker,
// the recorder recording batches as the story goes and reflection running
// automatically after them, the faithful scribe citing the perceptions
// each reflection request showed. The script makes each member perceive
// what the other does not: 苏砚 away for a stretch, then Maren, and
// whispers to each. Afterwards each member has beliefs formed over several
// runs, some from what only it perceived, and every evidence link of every
// belief points to a perception of the belief's own character.
//
// The positive control then tampers with Maren's answer to a /reflect:
// it cites perceptions of 苏砚's that Maren was never shown, once beside
// her own and once alone. The engine removes the one and drops the other,
// the job record says why, and the evidence check still holds.
func TestReflectSceneEachCitesItsOwnPerceptions(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			r := newViewRig(t, b, viewOpts{recorder: true, batch: 6, reflect: &sceneReflection, period: 20, noRecall: true})
			var mu sync.Mutex
			asked := map[string]int{}
			var hers []string // perception ids shown to 苏砚
			tamper, tampers := false, 0
			r.reflect = func(req openaitest.Request, answer string) string {
				name, ps, _ := memorytest.ReflectionShown(req)
				mu.Lock()
				defer mu.Unlock()
				asked[name]++
				if name == "苏砚" {
					for _, p := range ps {
						hers = append(hers, p.ID)
					}
				}
				if !tamper || name != "Maren" || len(hers) < 2 {
					return answer
				}
				tampers++
				return tampered(t, answer, hers[:2])
			}

			users := playSixtyTurns(t, r)
			if users != 60 {
				t.Fatalf("the script played %d user turns, want 60", users)
			}
			r.drain(t)
			mu.Lock()
			for _, name := range []string{"Maren", "苏砚"} {
				if asked[name] < 3 {
					t.Errorf("%s was asked to reflect %d times in 60 turns, want several (3 or more): %v", name, asked[name], asked)
				}
			}
			mu.Unlock()
			chat := sceneChat(t, r.sceneRig)
			checkOwnEvidence(t, r.st, chat.SpaceID)

			// The positive control: a tampered answer citing 苏砚's
			// perceptions for Maren.
			mu.Lock()
			tamper = true
			foreign := append([]string(nil), hers[:2]...)
			mu.Unlock()
			var owners []string
			if err := r.st.DB().Model(&models.Perception{}).Where("id IN ?", foreign).Distinct().Pluck("character_name", &owners).Error; err != nil {
				t.Fatal(err)
			}
			if len(owners) != 1 || owners[0] != "苏砚" {
				t.Fatalf("the tampered citations %v belong to %v, want 苏砚's perceptions", foreign, owners)
			}
			// Recorded by hand, three more turns leave fewer than a batch
			// waiting: no automatic run takes Maren's new perceptions
			// before the /reflect.
			r.exec(t, "/record")
			for i := range 3 {
				r.say(t, 100+i, fmt.Sprintf("Maren, one more word about the lamp wick, please (%d).", i))
			}
			r.exec(t, "/record")
			s, _ := r.exec(t, "/reflect")
			if len(s.notices) != 1 || !strings.Contains(s.notices[0], "Reflected") {
				t.Fatalf("/reflect: %q", s.notices)
			}
			mu.Lock()
			sent := tampers
			mu.Unlock()
			if sent != 1 {
				t.Fatalf("%d tampered answers sent for Maren, want 1", sent)
			}
			var job models.JobRecord
			if err := r.st.DB().Where("kind = ? AND key = ?", memory.KindReflect, chat.ID).Take(&job).Error; err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"add[0]: " + string(belief.Corrected) + ": " + string(belief.ReasonUnknownPerc),
				"add[1]: " + string(belief.Dropped) + ": " + string(belief.ReasonNoPerception),
			} {
				if !strings.Contains(job.Reason, want) {
					t.Errorf("the reflection's job record lacks %q:\n%s", want, job.Reason)
				}
			}
			var leaked int64
			if err := r.st.DB().Model(&models.BeliefEvidence{}).Where("perception_id IN ?", foreign).
				Joins("JOIN beliefs b ON b.id = belief_evidence.belief_id").Where("b.character_name = ?", "Maren").Count(&leaked).Error; err != nil {
				t.Fatal(err)
			}
			if leaked != 0 {
				t.Errorf("%d of Maren's evidence links cite 苏砚's tampered perceptions", leaked)
			}
			var taken int64
			if err := r.st.DB().Model(&models.Belief{}).Where("text = ?", tamperedText).Count(&taken).Error; err != nil {
				t.Fatal(err)
			}
			if taken != 0 {
				t.Errorf("the belief citing only 苏砚's perceptions was written")
			}
			checkOwnEvidence(t, r.st, chat.SpaceID)
		})
	}
}

// tamperedText is the belief a tampered answer forms from another
// character's perceptions alone.
const tamperedText = "Maren knows what was told to the tea house keeper alone."

// tampered adds foreign citations to a reflection answer: the first
// foreign id beside the first new belief's own, and a second new belief
// citing only foreign ids.
func tampered(t *testing.T, answer string, foreign []string) string {
	var a map[string]any
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		t.Errorf("the faithful reflection is no JSON: %v", err)
		return answer
	}
	adds, _ := a["add"].([]any)
	if len(adds) > 0 {
		first := adds[0].(map[string]any)
		first["supports"] = append(first["supports"].([]any), foreign[0])
	}
	a["add"] = append(adds, map[string]any{"text": tamperedText, "confidence": "likely", "supports": foreign})
	out, _ := json.Marshal(a)
	return string(out)
}

// playSixtyTurns plays the scene's script and returns how many user turns
// it sent: both members present; 苏砚 away; both with whispers to each;
// Maren away; both with whispers again.
func playSixtyTurns(t *testing.T, r *viewRig) int {
	t.Helper()
	msg, users := 1, 0
	// Each turn's jobs run before the next turn, so when the recorder and
	// reflection run (and so how often each member reflects) follows the
	// script, not the machine's load.
	say := func(text string) {
		r.say(t, msg, text)
		msg++
		users++
		r.drain(t)
	}
	whisper := func(to, text string) {
		r.exec(t, "/whisper "+to+" "+text)
		users++
		r.drain(t)
	}
	both := func(from, to int) {
		for i := from; i <= to; i++ {
			switch {
			case i%6 == 0:
				whisper("Maren", fmt.Sprintf("only you may know: the spare lamp key hangs on nail %d.", i))
			case i%6 == 3:
				whisper("苏砚", fmt.Sprintf("只告诉你：第%d号茶罐里藏着一封信。", i))
			case i%2 == 0:
				say(fmt.Sprintf("Maren, the tide log for night %d shows a strange ship.", i))
			default:
				say(fmt.Sprintf("@苏砚 the guest in room %d asked for jasmine tea.", i))
			}
		}
	}
	for i := 1; i <= 12; i++ {
		if i%2 == 0 {
			say(fmt.Sprintf("Maren, the harbour bell rang %d times at dusk.", i))
		} else {
			say(fmt.Sprintf("@苏砚 the kettle whistled %d times this evening.", i))
		}
	}
	r.exec(t, "/cast away 苏砚")
	for i := 13; i <= 26; i++ {
		say(fmt.Sprintf("Maren, the smuggler's lantern blinked %d times from the cliffs.", i))
	}
	r.exec(t, "/cast back 苏砚")
	both(27, 40)
	r.exec(t, "/cast away Maren")
	for i := 41; i <= 50; i++ {
		say(fmt.Sprintf("@苏砚 the ferry from the east brought guest number %d.", i))
	}
	r.exec(t, "/cast back Maren")
	both(51, 60)
	return users
}

// checkOwnEvidence checks, by querying the tables, that every evidence link
// of every belief of the space points to a perception of the belief's own
// character; that each member has beliefs; and that each member's beliefs
// cite a perception of an event the other member never perceived (so the
// scene did give them different things to reflect on).
func checkOwnEvidence(t *testing.T, st *models.Store, spaceID string) {
	t.Helper()
	db := st.DB()
	var links []struct {
		Believer, Perceiver, EventID string
	}
	err := db.Table("belief_evidence").
		Select("b.character_name AS believer, p.character_name AS perceiver, p.event_id AS event_id").
		Joins("JOIN beliefs b ON b.id = belief_evidence.belief_id").
		Joins("LEFT JOIN perceptions p ON p.id = belief_evidence.perception_id").
		Where("b.space_id = ?", spaceID).Scan(&links).Error
	if err != nil {
		t.Fatal(err)
	}
	perceived := func(who string) map[string]bool {
		var evs []string
		if err := db.Model(&models.Perception{}).Where("space_id = ? AND character_name = ?", spaceID, who).Pluck("event_id", &evs).Error; err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, e := range evs {
			m[e] = true
		}
		return m
	}
	other := map[string]string{"Maren": "苏砚", "苏砚": "Maren"}
	seen := map[string]map[string]bool{"Maren": perceived("Maren"), "苏砚": perceived("苏砚")}
	count, own := map[string]int{}, map[string]int{}
	for _, l := range links {
		if l.Perceiver != l.Believer {
			t.Errorf("a belief of %s cites a perception of %q", l.Believer, l.Perceiver)
			continue
		}
		count[l.Believer]++
		if o, ok := other[l.Believer]; ok && !seen[o][l.EventID] {
			own[l.Believer]++
		}
	}
	for _, name := range []string{"Maren", "苏砚"} {
		bs, err := st.Beliefs(context.Background(), spaceID, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) == 0 || count[name] == 0 {
			t.Errorf("%s has %d beliefs with %d evidence links, want some", name, len(bs), count[name])
		}
		if own[name] == 0 {
			t.Errorf("no belief of %s cites something only %s perceived: the scene gave the members nothing different", name, name)
		}
	}
}
