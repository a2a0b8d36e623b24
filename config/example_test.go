package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// exampleFile is the documented example configuration at the repository root.
const exampleFile = "../troupe.example.yaml"

// envMap turns a map into the lookup func Load takes.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// writeConfig writes body to a troupe.yaml in a fresh temporary directory.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "troupe.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// nilEmptySlices makes every empty slice in v nil, so that `key: []` in a
// file compares equal to an unset list.
func nilEmptySlices(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			nilEmptySlices(v.Field(i))
		}
	case reflect.Slice:
		if v.Len() == 0 && !v.IsNil() && v.CanSet() {
			v.Set(reflect.Zero(v.Type()))
		}
	}
}

// yamlKeys returns the dotted paths of every leaf in a parsed YAML mapping.
func yamlKeys(prefix string, m map[string]any, out *[]string) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			yamlKeys(key, sub, out)
			continue
		}
		*out = append(*out, key)
	}
}

func exampleKeys(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", exampleFile, err)
	}
	var keys []string
	yamlKeys("", doc, &keys)
	sort.Strings(keys)
	return keys
}

// TestExampleIsDefault keeps troupe.example.yaml and Default() in step: the
// example must load strictly (no unknown keys) and hold exactly the defaults.
func TestExampleIsDefault(t *testing.T) {
	t.Parallel()
	got, err := Load(exampleFile, envMap(nil))
	if err != nil {
		t.Fatalf("Load(%s): %v", exampleFile, err)
	}
	nilEmptySlices(reflect.ValueOf(&got).Elem())
	if want := Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s differs from Default():", exampleFile)
		gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
		walk(reflect.ValueOf(&got).Elem(), "", func(key string, _ reflect.Value) {
			g, w := fieldByKey(gv, key), fieldByKey(wv, key)
			if !reflect.DeepEqual(g.Interface(), w.Interface()) {
				t.Errorf("  %s: example %v, default %v", key, g.Interface(), w.Interface())
			}
		})
	}
}

func fieldByKey(v reflect.Value, key string) reflect.Value {
	for _, part := range strings.Split(key, ".") {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0] == part {
				v = v.Field(i)
				break
			}
		}
	}
	return v
}

// TestExampleCoversEveryKey checks that the example documents every key, and
// that every key in it has an environment variable.
func TestExampleCoversEveryKey(t *testing.T) {
	t.Parallel()
	env := EnvKeys()
	seen := map[string]bool{}
	for _, k := range env {
		if seen[k] {
			t.Errorf("EnvKeys lists %s twice (two keys map to one variable)", k)
		}
		seen[k] = true
	}
	inFile := map[string]bool{}
	for _, key := range exampleKeys(t) {
		inFile[EnvName(key)] = true
		if !seen[EnvName(key)] {
			t.Errorf("%s: key %s has no environment variable %s in EnvKeys()", exampleFile, key, EnvName(key))
		}
	}
	for _, k := range env {
		if !inFile[k] {
			t.Errorf("%s does not document the key behind %s", exampleFile, k)
		}
	}
	if len(env) == 0 {
		t.Fatal("EnvKeys() is empty")
	}
}

// TestDeployFilesUseKnownEnv checks every TROUPE_* name in the Dockerfile,
// docker-compose.yml and the example against EnvKeys().
func TestDeployFilesUseKnownEnv(t *testing.T) {
	t.Parallel()
	known := map[string]bool{"TROUPE_A_B_C": true} // the example's rule placeholder
	for _, k := range EnvKeys() {
		known[k] = true
	}
	re := regexp.MustCompile(`TROUPE_[A-Z0-9_]+`)
	for _, f := range []string{"../Dockerfile", "../docker-compose.yml", exampleFile} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, name := range re.FindAllString(line, -1) {
				if !known[name] {
					t.Errorf("%s:%d: %s is not a troupe environment variable", f, i+1, name)
				}
			}
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		file  string // written to a temp troupe.yaml
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{
			name:  "env int",
			env:   map[string]string{"TROUPE_MEMORY_KEEP": "8"},
			check: func(t *testing.T, c Config) { eq(t, c.Memory.Keep, 8) },
		},
		{
			name:  "env int with spaces",
			env:   map[string]string{"TROUPE_MEMORY_PERIOD": " 0 "},
			check: func(t *testing.T, c Config) { eq(t, c.Memory.Period, 0) },
		},
		{
			name: "env duration",
			env:  map[string]string{"TROUPE_MODEL_TIMEOUT": "90s", "TROUPE_MEMORY_IDLE_RECAP": "1h30m"},
			check: func(t *testing.T, c Config) {
				eq(t, c.Model.Timeout, 90*time.Second)
				eq(t, c.Memory.IdleRecap, 90*time.Minute)
			},
		},
		{
			name:  "env float",
			env:   map[string]string{"TROUPE_MODEL_TEMPERATURE": "0.25"},
			check: func(t *testing.T, c Config) { eq(t, c.Model.Temperature, 0.25) },
		},
		{
			name:  "env bool",
			env:   map[string]string{"TROUPE_DISCORD_ALLOW_DMS": "true", "TROUPE_TELEGRAM_ALLOW_GROUPS": "1"},
			check: func(t *testing.T, c Config) { eq(t, c.Discord.AllowDMs, true); eq(t, c.Telegram.AllowGroups, true) },
		},
		{
			name: "env list",
			env:  map[string]string{"TROUPE_DISCORD_ALLOWED_GUILDS": " 111, 222 ,,333 "},
			check: func(t *testing.T, c Config) {
				eq(t, c.Discord.AllowedGuilds, []string{"111", "222", "333"})
			},
		},
		{
			name: "empty env list clears the file's",
			file: "discord:\n  admin_roles: [a, b]\n",
			env:  map[string]string{"TROUPE_DISCORD_ADMIN_ROLES": ""},
			check: func(t *testing.T, c Config) {
				if len(c.Discord.AdminRoles) != 0 {
					t.Errorf("admin_roles = %q, want empty", c.Discord.AdminRoles)
				}
			},
		},
		{
			name: "env secret",
			env:  map[string]string{"TROUPE_DISCORD_TOKEN": "discord-tok", "TROUPE_REDIS_URL": "redis://:pw@redis:6379/0"},
			check: func(t *testing.T, c Config) {
				eq(t, c.Discord.Token.Value(), "discord-tok")
				eq(t, c.Redis.URL.Value(), "redis://:pw@redis:6379/0")
			},
		},
		{
			name: "env string",
			env:  map[string]string{"TROUPE_MODEL_BASE_URL": "http://localhost:11434/v1", "TROUPE_LANGUAGE": "zh"},
			check: func(t *testing.T, c Config) {
				eq(t, c.Model.BaseURL, "http://localhost:11434/v1")
				eq(t, c.Language, "zh")
			},
		},
		{
			name:  "file value",
			file:  "memory:\n  keep: 4\nmodel:\n  timeout: 45s\n",
			check: func(t *testing.T, c Config) { eq(t, c.Memory.Keep, 4); eq(t, c.Model.Timeout, 45*time.Second) },
		},
		{
			name: "file keeps other defaults",
			file: "memory:\n  keep: 4\n",
			check: func(t *testing.T, c Config) {
				want := Default()
				want.Memory.Keep = 4
				if !reflect.DeepEqual(c, want) {
					t.Errorf("got %+v, want %+v", c, want)
				}
			},
		},
		{
			name:  "env beats file",
			file:  "memory:\n  keep: 4\n",
			env:   map[string]string{"TROUPE_MEMORY_KEEP": "9"},
			check: func(t *testing.T, c Config) { eq(t, c.Memory.Keep, 9) },
		},
		{
			name:  "empty file is the defaults",
			file:  "# nothing here\n",
			check: func(t *testing.T, c Config) { eq(t, c, Default()) },
		},
		{
			name:  "OPENAI_API_KEY fills model.api_key",
			env:   map[string]string{"OPENAI_API_KEY": "sk-openai"},
			check: func(t *testing.T, c Config) { eq(t, c.Model.APIKey.Value(), "sk-openai") },
		},
		{
			name:  "TROUPE_MODEL_API_KEY beats OPENAI_API_KEY",
			env:   map[string]string{"OPENAI_API_KEY": "sk-openai", "TROUPE_MODEL_API_KEY": "sk-troupe"},
			check: func(t *testing.T, c Config) { eq(t, c.Model.APIKey.Value(), "sk-troupe") },
		},
		{
			name:  "file api_key beats OPENAI_API_KEY",
			file:  "model:\n  api_key: sk-file\n",
			env:   map[string]string{"OPENAI_API_KEY": "sk-openai"},
			check: func(t *testing.T, c Config) { eq(t, c.Model.APIKey.Value(), "sk-file") },
		},
		{
			name: "OPENAI_API_KEY does not fill the scribe's key itself",
			env:  map[string]string{"OPENAI_API_KEY": "sk-openai"},
			check: func(t *testing.T, c Config) {
				eq(t, c.Scribe.APIKey.Value(), "")
				eq(t, c.ScribeModel().APIKey.Value(), "sk-openai")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(writeConfig(t, tt.file), envMap(tt.env))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		file     string
		env      map[string]string
		key      string   // the *Error's Key
		contains []string // substrings of the message
		hides    []string // substrings the message must not contain
	}{
		{name: "int not a number", env: map[string]string{"TROUPE_MEMORY_KEEP": "six"}, key: "memory.keep", contains: []string{"TROUPE_MEMORY_KEEP", "six", "whole number"}},
		{name: "int out of range", env: map[string]string{"TROUPE_MEMORY_KEEP": "0"}, key: "memory.keep", contains: []string{"at least 1"}},
		{name: "int out of range in file", file: "memory:\n  keep: -1\n", key: "memory.keep"},
		{name: "duration", env: map[string]string{"TROUPE_MODEL_TIMEOUT": "soon"}, key: "model.timeout", contains: []string{"duration"}},
		{name: "duration without unit", env: map[string]string{"TROUPE_MEMORY_IDLE_RECAP": "5"}, key: "memory.idle_recap"},
		{name: "zero duration", env: map[string]string{"TROUPE_MEMORY_IDLE_RECAP": "0s"}, key: "memory.idle_recap"},
		{name: "bool", env: map[string]string{"TROUPE_DISCORD_ALLOW_DMS": "maybe"}, key: "discord.allow_dms", contains: []string{"true or false"}},
		{name: "float", env: map[string]string{"TROUPE_MODEL_TEMPERATURE": "warm"}, key: "model.temperature"},
		{name: "float out of range", env: map[string]string{"TROUPE_MODEL_TEMPERATURE": "2.5"}, key: "model.temperature"},
		{name: "language", env: map[string]string{"TROUPE_LANGUAGE": "fr"}, key: "language", contains: []string{"en or zh"}},
		{name: "base url", env: map[string]string{"TROUPE_MODEL_BASE_URL": "localhost:11434"}, key: "model.base_url"},
		{name: "dsn", env: map[string]string{"TROUPE_DATABASE_DSN": "mysql://u:hunter2@db/troupe"}, key: "database.dsn", hides: []string{"hunter2"}},
		{name: "redis url", env: map[string]string{"TROUPE_REDIS_URL": "http://:hunter2@redis"}, key: "redis.url", hides: []string{"hunter2"}},
		{name: "shard id", env: map[string]string{"TROUPE_DISCORD_SHARD_ID": "1"}, key: "discord.shard_id"},
		{name: "webhook needs secret", env: map[string]string{"TROUPE_TELEGRAM_WEBHOOK_URL": "https://bot.example/tg"}, key: "telegram.webhook_secret"},
		{name: "webhook over http", env: map[string]string{"TROUPE_TELEGRAM_WEBHOOK_URL": "http://bot.example/tg", "TROUPE_TELEGRAM_WEBHOOK_SECRET": "s"}, key: "telegram.webhook_url", contains: []string{"https://", "over https only"}},
		{name: "webhook listen", env: map[string]string{"TROUPE_TELEGRAM_WEBHOOK_URL": "https://bot.example/tg", "TROUPE_TELEGRAM_WEBHOOK_SECRET": "s", "TROUPE_TELEGRAM_WEBHOOK_LISTEN": "8443"}, key: "telegram.webhook_listen", contains: []string{"host:port"}},
		{name: "log level", file: "log:\n  level: loud\n", key: "log.level"},
		{name: "unknown key", file: "memory:\n  keep: 6\n  kep: 7\n", contains: []string{"kep", "line 3"}},
		{name: "removed key", file: "telegram:\n  rate_per_minute: 5\n", contains: []string{"telegram.rate_per_minute", "limits.rate_per_minute", "line 2"}},
		{name: "unknown section", file: "modle:\n  name: x\n", contains: []string{"modle"}},
		{name: "not yaml", file: "model: [\n", contains: []string{"line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.file)
			_, err := Load(path, envMap(tt.env))
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("Load: err = %v (%T), want *Error", err, err)
			}
			if tt.key != "" && cerr.Key != tt.key {
				t.Errorf("Key = %q, want %q (%v)", cerr.Key, tt.key, err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q does not mention %q", err, s)
				}
			}
			for _, s := range tt.hides {
				if strings.Contains(err.Error(), s) {
					t.Errorf("message %q shows %q", err, s)
				}
			}
		})
	}
}

func TestLoadMissingExplicitFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path, envMap(nil))
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Load(%s): err = %v, want *Error", path, err)
	}
	if cerr.Key != "--config" || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("err = %v (Key %q), want Key --config naming the file", err, cerr.Key)
	}
}

// TestLoadDefaultFile cannot be parallel: it changes the working directory.
func TestLoadDefaultFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c, err := Load("", envMap(nil))
	if err != nil {
		t.Fatalf("no troupe.yaml: %v", err)
	}
	eq(t, c, Default())
	if err := os.WriteFile(filepath.Join(dir, DefaultFile), []byte("memory:\n  keep: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Load("", envMap(nil))
	if err != nil {
		t.Fatalf("with troupe.yaml: %v", err)
	}
	eq(t, c.Memory.Keep, 3)
}

func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	const value = "hunter2"
	s := Secret(value)
	cfg := Default()
	cfg.Model.APIKey = s
	cfg.Database.DSN = Secret("postgres://u:" + value + "@db/troupe")
	cfg.Discord.Token = s
	cfg.Telegram.WebhookSecret = s
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q", "%x", "%10s"} {
		for _, arg := range []any{s, &s, cfg, &cfg, []Secret{s}, map[string]Secret{"k": s}} {
			if out := fmt.Sprintf(verb, arg); strings.Contains(out, value) || strings.Contains(out, fmt.Sprintf("%x", value)) {
				t.Errorf("Sprintf(%q, %T) = %q shows the secret", verb, arg, out)
			}
		}
	}
	if got := fmt.Sprint(s); got != "[redacted]" {
		t.Errorf("Sprint = %q, want [redacted]", got)
	}
	if got := fmt.Sprint(Secret("")); got != "" {
		t.Errorf("empty secret prints %q, want empty (so 'not set' stays visible)", got)
	}
	if s.Value() != value {
		t.Errorf("Value() = %q, want %q", s.Value(), value)
	}
}

func eq[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
