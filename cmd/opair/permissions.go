package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/opair-dev/opair/host/config"
)

func newPermissionsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "permissions",
		Short: "List and revoke the permission rules of your config, saved approvals included",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the permission rules of your config, numbered (the last matching rule wins)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := config.Path()
			if err != nil {
				return err
			}
			cfg, err := config.Load(path, "")
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(cfg.Permissions) == 0 {
				fmt.Fprintf(out, "No permission rules in %s.\n", path)
				return nil
			}
			fmt.Fprintf(out, "Permission rules in %s (the last matching rule wins):\n\n", path)
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "#\tTOOL\tARGS\tPATH\tACTION\tLINE")
			for i, r := range cfg.Permissions {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", i+1, escapeTerminal(r.Tool), dash(escapeTerminal(r.Args)), dash(escapeTerminal(r.Path)), r.Action, r.Source)
			}
			return tw.Flush()
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke N",
		Short: "Remove rule N (as 'opair permissions list' numbers them) from your config",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return usageError{fmt.Errorf("the rule number must be a number, not %q", args[0])}
			}
			path, err := config.Path()
			if err != nil {
				return err
			}
			r, err := config.RemoveRule(path, n)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed rule %d from %s: %s\n", n, path, r.JSON())
			return nil
		},
	}
	c.AddCommand(list, revoke)
	return c
}
