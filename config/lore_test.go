package config

import "testing"

func TestLoreBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lore   Lore
		window int
		want   int
	}{
		{Lore{BudgetPercent: 25, BudgetTokens: 4096}, 128000, 4096},
		{Lore{BudgetPercent: 25, BudgetTokens: 4096}, 8192, 2048},
		{Lore{BudgetPercent: 25, BudgetTokens: 4096}, 0, 4096},
		{Lore{BudgetPercent: 0, BudgetTokens: 4096}, 8192, 4096},
		{Lore{BudgetPercent: 10, BudgetTokens: 0}, 8192, 819},
		{Lore{}, 8192, 0},
	}
	for _, tt := range tests {
		if got := tt.lore.Budget(tt.window); got != tt.want {
			t.Errorf("%+v.Budget(%d) = %d, want %d", tt.lore, tt.window, got, tt.want)
		}
	}
	c := Default()
	c.Lore.BudgetPercent = 101
	if err := c.Validate(); err == nil {
		t.Error("lore.budget_percent 101 was accepted")
	}
}
