package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/opair-dev/opair/host/session"
)

func newSessionsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "sessions",
		Short: "List the logged sessions of a project",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var project string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the sessions of the project, newest first ('opair --continue' resumes the first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := projectRoot(project)
			if err != nil {
				return err
			}
			state, err := session.StateDir()
			if err != nil {
				return err
			}
			infos, err := session.List(state, root)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(infos) == 0 {
				fmt.Fprintf(out, "No sessions in %s yet.\n", root)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "LAST ACTIVE\tMODE\tMODEL\tTURNS\tFIRST REQUEST\tLOG")
			for _, in := range infos {
				first := strings.ReplaceAll(truncateRunes(in.First, 50), "\n", " ")
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", in.Modified.Format("2006-01-02 15:04"), in.Meta.Mode, in.Meta.Model, in.Turns, escapeTerminal(first), in.Path)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&project, "project", "", "the project root (default: the current directory)")
	c.AddCommand(list)
	return c
}
