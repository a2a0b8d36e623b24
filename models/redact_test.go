package models_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"troupe/models"
)

// composeDSN is the database DSN docker-compose.yml gives troupe.
func composeDSN(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`TROUPE_DATABASE_DSN:\s*(\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("docker-compose.yml sets no TROUPE_DATABASE_DSN")
	}
	return string(m[1])
}

// With compose's DSN, whose password ("troupe") is also its user and
// database, a failed connection says which user and database it tried and
// hides the password alone: the driver's "user=troupe database=troupe"
// stays as it is.
func TestOpenErrorHidesThePasswordNotTheWords(t *testing.T) {
	dsn := composeDSN(t)
	if !strings.Contains(dsn, ":troupe@") {
		t.Fatalf("compose's DSN %q has changed; the test needs its password to be a word it also uses", dsn)
	}
	// Nothing listens on port 1: the driver's own error, at once.
	unreachable := strings.Replace(dsn, "@postgres:5432/", "@127.0.0.1:1/", 1) + "&connect_timeout=2"
	_, err := models.Connect(unreachable, nil)
	if err == nil {
		t.Fatal("connecting to port 1 did not fail")
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if strings.Contains(msg, "[redacted]") && !strings.Contains(msg, ":[redacted]@") {
		t.Errorf("got %q: words other than the password were redacted", msg)
	}
	if !strings.Contains(msg, "user=troupe database=troupe") {
		t.Errorf("got %q, want the driver's user=troupe database=troupe kept", msg)
	}
	if strings.Contains(msg, ":troupe@") || strings.Contains(msg, "password=troupe") {
		t.Errorf("got %q, which holds the password", msg)
	}
}

// A password is cut where it stands as one, in a URL or a setting, and
// nowhere else.
func TestRedactSecretValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cannot reach postgres://troupe:troupe@db:5432/troupe?sslmode=disable", "cannot reach postgres://troupe:[redacted]@db:5432/troupe?sslmode=disable"},
		{"host=db user=troupe password=troupe dbname=troupe", "host=db user=troupe password=[redacted] dbname=troupe"},
		{`password='my \'s3cret' user=troupe`, "password=[redacted] user=troupe"},
		{"failed to connect to `user=troupe database=troupe`: dial error", "failed to connect to `user=troupe database=troupe`: dial error"},
	}
	for _, tt := range tests {
		if got := models.RedactSecrets(tt.in); got != tt.want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
