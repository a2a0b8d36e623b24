package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func (c *cli) healthCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Check a running troupe's /readyz on ops.listen (for container health checks)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.load()
			if err != nil {
				return err
			}
			addr := cfg.Ops.Listen
			if strings.HasPrefix(addr, ":") || strings.HasPrefix(addr, "0.0.0.0:") {
				addr = "127.0.0.1:" + addr[strings.LastIndex(addr, ":")+1:]
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("health: %w", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("health: /readyz answered %s", resp.Status)
			}
			_, err = fmt.Fprintln(c.stdout, "ok")
			return err
		},
	}
}
