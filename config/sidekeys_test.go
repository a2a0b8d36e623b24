package config_test

import (
	"testing"

	"troupe/config"
)

func TestSameServer(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://api.openai.com/v1", "", true},
		{"https://API.openai.com:443/v1", "https://api.openai.com/other", true},
		{"http://localhost:11434/v1", "http://localhost:11434", true},
		{"http://localhost:11434/v1", "http://localhost:8080/v1", false},
		{"http://api.openai.com/v1", "https://api.openai.com/v1", false},
		{"https://api.jina.ai/v1", "https://api.openai.com/v1", false},
		{"https://api.openai.com.evil.example/v1", "https://api.openai.com/v1", false},
		{"not a url", "not a url", false},
	}
	for _, tt := range tests {
		if got := config.SameServer(tt.a, tt.b); got != tt.want {
			t.Errorf("SameServer(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
