// Command opair is the Opair coding harness: a tool host whose every tool is
// one JSON file that the human controls.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/toolfile"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed: invalid tools, missing tool…
	exitUsage   = 2 // bad flags or arguments
)

// usageError marks an error in how the command was called.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// reportedError marks a failure whose details were already printed.
type reportedError struct{ msg string }

func (r reportedError) Error() string { return r.msg }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ue usageError
	var re reportedError
	var te toolfile.Errors
	switch {
	case errors.As(err, &re):
		fmt.Fprintf(stderr, "opair: %s\n", re.msg)
	case errors.As(err, &te):
		fmt.Fprintln(stderr, te.Error())
		fmt.Fprintf(stderr, "opair: %s\n", countErrors(te))
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "opair: %v\nRun 'opair --help' for usage.\n", ue.err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "opair: %v\n", err)
	}
	return exitFailure
}

func countErrors(te toolfile.Errors) string {
	n, f := len(te), len(te.Files())
	return fmt.Sprintf("%d %s in %d %s", n, plural(n, "error", "errors"), f, plural(f, "file", "files"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		mode, project string
		resume        bool
	)
	root := &cobra.Command{
		Use:   "opair",
		Short: "A coding harness that eschews autonomy",
		Long: `Opair is a coding harness that eschews autonomy: the model gets no shell,
only tools that each run one specific executable or one bounded file
operation, each defined by one JSON file, and the human decides what it may do.

Run 'opair' in a project for an interactive session (navigator mode: the
model reads, searches and runs tests; /driver lets it change the project).

Tools live in the tools directory: $OPAIR_TOOLS_DIR, or
<user config dir>/opair/tools. When it does not exist, the default tool set
built into opair is used; 'opair init' writes it out for you to edit.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := permission.ParseMode(mode)
			if err != nil {
				return usageError{err}
			}
			return runInteractive(cmd.Context(), stdout, stderr, m, project, resume)
		},
	}
	root.Flags().StringVar(&mode, "mode", "navigator", "start in navigator (read, search, test) or driver (may change the project) mode")
	root.Flags().StringVar(&project, "project", "", "the project root (default: the current directory)")
	root.Flags().BoolVar(&resume, "continue", false, "continue the last session of the project")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newToolsCmd(), newInitCmd(), newVersionCmd(), newRunCmd(), newSessionsCmd(), newPermissionsCmd(), newMCPCmd())
	wrapArgs(root)
	return root
}

// wrapArgs makes argument-count errors usage errors throughout the tree.
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		inner := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := inner(cmd, args); err != nil {
				return usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}
