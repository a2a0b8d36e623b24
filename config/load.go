package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// DefaultFile is read when no --config is given and the file exists.
const DefaultFile = "troupe.yaml"

// EnvPrefix starts every environment override.
const EnvPrefix = "TROUPE_"

// Load builds a Config from the defaults, the file at path (DefaultFile if
// path is empty and that file exists) and the environment given by lookup.
// When values are invalid it returns every problem found: an *Error naming
// the key when there is one, Errors when there are several.
func Load(path string, lookup func(string) (string, bool)) (Config, error) {
	cfg := Default()
	explicit := path != ""
	if !explicit {
		path = DefaultFile
	}
	var errs []*Error
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			var te *yaml.TypeError
			if !errors.As(err, &te) {
				// A file that does not parse says nothing more.
				return Config{}, join(fileErrors(path, data, err))
			}
			// The values that decoded are kept, so the rest of the file
			// and the environment are still checked.
			errs = append(errs, fileErrors(path, data, err)...)
		}
	case errors.Is(err, os.ErrNotExist) && !explicit:
	default:
		return Config{}, &Error{Key: "--config", Problem: err.Error()}
	}
	errs = append(errs, applyEnv(&cfg, lookup)...)
	if cfg.Model.APIKey == "" {
		if v, ok := lookup("OPENAI_API_KEY"); ok {
			cfg.Model.APIKey = Secret(v)
		}
	}
	bad := map[string]bool{}
	for _, e := range errs {
		bad[e.Key] = true
	}
	for _, e := range cfg.problems() {
		// A key whose value was refused keeps its default; whatever the
		// checks say of it would only repeat the problem.
		if !bad[e.Key] {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return Config{}, join(errs)
	}
	return cfg, nil
}

func yamlProblem(msg string) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = strings.ReplaceAll(msg, "not found in type config.", "unknown key in ")
	return msg
}

// EnvKeys lists every environment variable Load reads, in struct order.
func EnvKeys() []string {
	var keys []string
	walk(reflect.ValueOf(&Config{}).Elem(), "", func(key string, _ reflect.Value) {
		keys = append(keys, EnvName(key))
	})
	return keys
}

// EnvName turns a dotted key ("memory.keep") into its variable name.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func walk(v reflect.Value, prefix string, fn func(key string, field reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct && f.Type() != reflect.TypeOf(time.Duration(0)) {
			walk(f, key, fn)
			continue
		}
		fn(key, f)
	}
}

func applyEnv(cfg *Config, lookup func(string) (string, bool)) []*Error {
	var errs []*Error
	walk(reflect.ValueOf(cfg).Elem(), "", func(key string, f reflect.Value) {
		raw, ok := lookup(EnvName(key))
		if !ok {
			return
		}
		if err := setField(f, raw); err != nil {
			errs = append(errs, &Error{Key: key, Problem: fmt.Sprintf("%s=%q: %v", EnvName(key), redactFor(f, raw), err)})
		}
	})
	return errs
}

func redactFor(f reflect.Value, raw string) string {
	if f.Type() == reflect.TypeOf(Secret("")) {
		return Secret(raw).String()
	}
	return raw
}

func setField(f reflect.Value, raw string) error {
	raw = strings.TrimSpace(raw)
	switch {
	case f.Type() == reflect.TypeOf(time.Duration(0)):
		d, err := time.ParseDuration(raw)
		if err != nil {
			return errors.New(durationHint(raw))
		}
		f.SetInt(int64(d))
	case f.Kind() == reflect.String:
		f.SetString(raw)
	case f.Kind() == reflect.Int:
		n, err := strconv.Atoi(raw)
		if err != nil {
			return errors.New("not a whole number")
		}
		f.SetInt(int64(n))
	case f.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return errors.New("not a number")
		}
		f.SetFloat(x)
	case f.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return errors.New("not true or false")
		}
		f.SetBool(b)
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
		var items []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		f.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("unsupported type %s", f.Type())
	}
	return nil
}
