package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/plugin"
	"github.com/opair-dev/opair/host/registry"
	"github.com/opair-dev/opair/host/toolfile"
)

func newToolsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "tools",
		Short: "List, validate and inspect tool files",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newToolsListCmd(), newToolsValidateCmd(), newToolsShowCmd(), newToolsCallCmd())
	return c
}

// loadRegistry loads the tools the way a session does: configuration,
// plugins, then the tool files validated against what the plugins serve.
func loadRegistry(cmd *cobra.Command) (*registry.Registry, func(), error) {
	h, err := setupHost(cmd.Context(), hostOptions{logOut: cmd.ErrOrStderr()})
	if err != nil {
		return nil, nil, err
	}
	return h.reg, h.close, nil
}

// listedTool is one row of `opair tools list --json`.
type listedTool struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	Kind         string `json:"kind"`
	Scope        string `json:"scope,omitempty"`
	Reads        string `json:"reads"`
	Writes       string `json:"writes"`
	Untrusted    bool   `json:"untrusted"`
	Internal     bool   `json:"internal"`
	SlashCommand string `json:"slashCommand,omitempty"`
	Available    bool   `json:"available"`
	Reason       string `json:"reason,omitempty"`
	File         string `json:"file"`
}

func toListed(e *registry.Entry) listedTool {
	l := listedTool{
		Name: e.Name, Type: e.Type(), Kind: string(e.Kind), Reads: string(e.Reads), Writes: string(e.Writes),
		Untrusted: e.Untrusted, Internal: e.Internal, SlashCommand: e.SlashCommand,
		Available: e.Available, Reason: e.Reason, File: e.File,
	}
	if e.Handler != nil {
		l.Scope = string(e.Handler.Scope)
	}
	return l
}

func newToolsListCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the tools, their categories and whether they are available",
		Long: `List every tool of the tools directory (or the embedded defaults) with its
handler type, scope, read and write categories, trust, slash command, and
whether it can be offered: a tool whose binary is not on $PATH is not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, done, err := loadRegistry(cmd)
			if err != nil {
				return err
			}
			defer done()
			out := cmd.OutOrStdout()
			entries := reg.Snapshot()
			if asJSON {
				rows := make([]listedTool, 0, len(entries))
				for _, e := range entries {
					rows = append(rows, toListed(e))
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"source": reg.Source, "tools": rows})
			}
			fmt.Fprintf(out, "Tools from %s:\n\n", reg.Source)
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTYPE\tSCOPE\tREADS\tWRITES\tUNTRUSTED\tSLASH\tSTATUS")
			unavailable := 0
			for _, e := range entries {
				l := toListed(e)
				status := "available"
				if !l.Available {
					status = "unavailable: " + l.Reason
					unavailable++
				} else if l.Internal {
					status = "internal (not offered to the model)"
				}
				typ := l.Type
				if typ == "" {
					typ = "(" + e.Server + ")"
				}
				slash := "-"
				if l.SlashCommand != "" {
					slash = "/" + l.SlashCommand
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Name, typ, dash(l.Scope), l.Reads, l.Writes, yesNo(l.Untrusted), slash, status)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(out, "\n%d tools, %d unavailable.\n", len(entries), unavailable)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return c
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func newToolsValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate [DIR]",
		Short: "Validate every tool file of a directory",
		Long: `Validate every *.json file of DIR (default: the tools directory) by every rule
of the tool-file format, and print every error of every file at once, each as
file:line:col: message, with a hint. Exits 0 when all are valid, 1 otherwise.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := setupHost(cmd.Context(), hostOptions{logOut: cmd.ErrOrStderr(), noTools: true})
			if err != nil {
				return err
			}
			defer h.close()
			cat := plugin.Catalog(h.plugins)
			var dir string
			if len(args) == 1 {
				dir = args[0]
			} else {
				d, explicit, err := registry.ToolsDir()
				if err != nil {
					return err
				}
				if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) && !explicit {
					set, err := registry.LoadDefaults(cat)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s does not exist; the embedded defaults are in use.\n%d tools valid in the embedded defaults.\n", d, len(set.Tools))
					return nil
				}
				dir = d
			}
			fi, err := os.Stat(dir)
			if err != nil {
				return fmt.Errorf("tools directory: %w", err)
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			set, err := toolfile.LoadDir(dir, cat)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d %s valid in %s.\n", len(set.Tools), plural(len(set.Tools), "tool", "tools"), dir)
			return nil
		},
	}
}

func newToolsShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show one tool: its schema as sent to the model, categories and gating",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, done, err := loadRegistry(cmd)
			if err != nil {
				return err
			}
			defer done()
			e := reg.Lookup(args[0])
			if e == nil {
				return reportedError{fmt.Sprintf("no tool named %q in %s; 'opair tools list' shows them", args[0], reg.Source)}
			}
			return showTool(cmd.OutOrStdout(), e)
		},
	}
}

func showTool(w io.Writer, e *registry.Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("Name:", e.Name)
	row("File:", e.File)
	switch e.Kind {
	case toolfile.KindHandlerless:
		row("Handler:", fmt.Sprintf("none (served by %s under its name)", e.Server))
	default:
		row("Handler:", fmt.Sprintf("%s (%s, served by %s)", e.Type(), e.Kind, e.Server))
	}
	if cmdline := e.Command(); cmdline != nil {
		row("Command:", strings.Join(cmdline, " ")+" <args…>")
		if e.BinPath != "" {
			row("Binary:", e.BinPath)
		}
		if len(e.Handler.DenyArgs) > 0 {
			row("Denied args:", strings.Join(e.Handler.DenyArgs, " "))
		}
		if len(e.Handler.AllowArgs) > 0 && len(e.Handler.DenyArgs) == 0 {
			row("Allowed args:", strings.Join(e.Handler.AllowArgs, " "))
		}
		if e.Handler.Summary != "" {
			row("Summary:", e.Handler.Summary)
		}
	}
	if e.Handler != nil && e.Handler.Scope != "" {
		row("Scope:", string(e.Handler.Scope))
	}
	if e.Handler != nil && e.Handler.Type == "findInProject" {
		row("Includes:", fmt.Sprintf("hidden %s, ignored %s", yesNo(e.Handler.IncludeHidden), yesNo(e.Handler.IncludeIgnored)))
	}
	how := "declared"
	if e.Kind == toolfile.KindBuiltin {
		how = "derived from type and scope"
	}
	row("Reads:", fmt.Sprintf("%s (%s)", e.Reads, how))
	row("Writes:", fmt.Sprintf("%s (%s)", e.Writes, how))
	if e.Untrusted {
		row("Untrusted:", "yes: "+e.UntrustedReason)
	} else {
		row("Untrusted:", "no")
	}
	if e.SlashCommand != "" {
		row("Slash command:", "/"+e.SlashCommand)
	}
	if e.Internal {
		row("Internal:", "yes (never offered to the model)")
	}
	if e.Available {
		row("Available:", "yes")
	} else {
		row("Available:", "no: "+e.Reason)
	}
	for _, m := range []permission.Mode{permission.Navigator, permission.Driver} {
		d := permission.Tool(e.Tool, m)
		row(fmt.Sprintf("In %s mode:", m), fmt.Sprintf("%s (%s)", d.Action, d.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nThe same tool called with identical arguments a third time in a row always asks; permission rules in the config may tighten any of this, and may loosen ask to allow except for untrusted tools.")
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, e.Schema, "", "  "); err != nil {
		return fmt.Errorf("formatting the schema of %s: %w", e.Name, err)
	}
	fmt.Fprintf(w, "\nSchema sent to the model:\n%s\n", pretty.String())
	return nil
}

func newInitCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "init",
		Short: "Write the default tool set into the tools directory",
		Long: `Write the default tool files into the tools directory ($OPAIR_TOOLS_DIR, or
<user config dir>/opair/tools), creating it. An existing file is never
overwritten: it is reported as skipped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				d, _, err := registry.ToolsDir()
				if err != nil {
					return err
				}
				dir = d
			}
			res, err := registry.WriteDefaults(dir)
			out := cmd.OutOrStdout()
			for _, name := range res.Written {
				fmt.Fprintf(out, "wrote   %s\n", filepath.Join(dir, name))
			}
			for _, name := range res.Skipped {
				fmt.Fprintf(out, "skipped %s (it exists; not overwritten)\n", filepath.Join(dir, name))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%d written, %d skipped in %s.\n", len(res.Written), len(res.Skipped), dir)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "write into this directory instead of the tools directory")
	return c
}
