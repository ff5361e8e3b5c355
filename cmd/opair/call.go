package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/opair-dev/opair/host/config"
	"github.com/opair-dev/opair/host/gate"
	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/session"
	"github.com/opair-dev/opair/host/toolfile"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

func newToolsCallCmd() *cobra.Command {
	var (
		mode, project string
		asJSON        bool
	)
	c := &cobra.Command{
		Use:   "call NAME [JSON]",
		Short: "Run one tool call through the permission gate and its plugin",
		Long: `Run one call of tool NAME with the JSON arguments the model would send
(default {}), through the same permission gate as a session: arguments are
checked against the tool's schema and deny lists before anything runs, and a
call that must be asked is asked on the terminal, showing the exact command
line. Without a terminal, ask means deny, and the error shows the rule that
would allow the call.

Progress streams to stderr, the result to stdout (--json for the raw result).
Ctrl-C cancels the call and kills its processes. Exit status: 0 when the call
succeeded, 1 when it failed, was refused or denied.`,
		Example: `  opair tools call goTest '{"args":["./..."]}'
  opair tools call gitStatus --json
  opair tools call readProjectFile '{"path":"go.mod"}' --project ~/src/app`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := permission.ParseMode(mode)
			if err != nil {
				return usageError{err}
			}
			raw := "{}"
			if len(args) == 2 {
				raw = args[1]
			}
			if !json.Valid([]byte(raw)) {
				return usageError{fmt.Errorf("the arguments %q are not valid JSON; write them as one object, e.g. '{\"args\":[\"./...\"]}'", raw)}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return callTool(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], json.RawMessage(raw), m, project, asJSON)
		},
	}
	c.Flags().StringVar(&mode, "mode", "navigator", "the mode to gate the call in: navigator or driver")
	c.Flags().StringVar(&project, "project", "", "the project root (default: the current directory)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the raw result as JSON")
	return c
}

func callTool(ctx context.Context, stdout, stderr io.Writer, name string, args json.RawMessage, mode permission.Mode, project string, asJSON bool) error {
	h, err := setupHost(ctx, hostOptions{project: project, logOut: stderr})
	if err != nil {
		return err
	}
	defer h.close()
	e := h.reg.Lookup(name)
	if e == nil {
		return reportedError{fmt.Sprintf("no tool named %q in %s; 'opair tools list' shows them", name, h.reg.Source)}
	}
	if e.Kind == toolfile.KindHandlerless && e.Server == "host" {
		return reportedError{fmt.Sprintf("%s is served by the host inside a session; it has nothing to run on its own", name)}
	}
	g := &gate.Gate{Root: h.root, Mode: mode, Config: h.cfg, HostEnv: os.Environ(), Paths: h.paths}
	p, err := g.Prepare(e, args)
	if err != nil {
		return err
	}
	// A write's dry run, computed at most once: replaceInProject's rules
	// and the approval prompt share it.
	var preview *session.Preview
	if p.Entry.Type() == "replaceInProject" {
		// Its paths are known only from a dry run: path rules apply to
		// every file it would change.
		preview, err = session.DryRun(ctx, h.plugins, p)
		if err != nil {
			return err
		}
		if preview.Failed != "" {
			return reportedError{fmt.Sprintf("%s: %s", name, preview.Failed)}
		}
		paths := make([]string, 0, len(preview.Files))
		for f := range preview.Files {
			paths = append(paths, f)
		}
		sort.Strings(paths)
		g.WithPaths(p, paths)
	}
	tty := openTTY()
	if tty != nil {
		defer tty.Close()
	}
	switch p.Decision.Action {
	case permission.Allow:
	case permission.NotOffered:
		return reportedError{fmt.Sprintf("%s is not offered in %s mode: %s (try --mode driver)", name, mode, p.Decision.Reason)}
	case permission.Deny:
		return reportedError{fmt.Sprintf("%s denied: %s", name, p.Decision.Reason)}
	case permission.Ask:
		// A write is previewed first: the human approves the diff, and the
		// write happens only if the files still hold what the diff was
		// computed from.
		if preview == nil && p.Entry.Kind == toolfile.KindBuiltin && p.Entry.Writes != toolfile.None {
			preview, err = session.DryRun(ctx, h.plugins, p)
			if err != nil {
				return err
			}
			if preview.Failed != "" {
				return reportedError{fmt.Sprintf("%s: %s", name, preview.Failed)}
			}
		}
		if tty == nil {
			return reportedError{denyMessage(p, h.cfgPath)}
		}
		ok, msg, err := ask(tty, p, h.root, preview, h.cfgPath)
		if err != nil {
			return err
		}
		if !ok {
			if msg != "" {
				return reportedError{fmt.Sprintf("%s rejected by you: %s", name, msg)}
			}
			return reportedError{fmt.Sprintf("%s rejected by you", name)}
		}
		if preview != nil {
			if err := preview.Bind(p); err != nil {
				return err
			}
		}
	default:
		return reportedError{fmt.Sprintf("%s: unknown decision %q; failing closed", name, p.Decision.Action)}
	}

	if p.Entry.Kind == toolfile.KindMCP {
		if h.mcp == nil {
			return reportedError{name + ": no MCP server is connected"}
		}
		text, isErr, err := h.mcp.Call(ctx, p.Entry.Tool, p.Args)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, strings.TrimRight(text, "\n"))
		if isErr {
			return reportedError{name + " failed"}
		}
		return nil
	}
	if len(p.Argv) > 0 {
		fmt.Fprintf(stderr, "$ %s\n", displayArgv(p.Argv))
	}
	streamed := false
	res, err := h.plugins.Invoke(ctx, p.Request, func(pr *pluginv1.Progress) {
		if len(pr.Output) > 0 {
			streamed = true
			_, _ = stderr.Write(pr.Output)
		}
		if pr.Message != "" {
			fmt.Fprintf(stderr, "… %s\n", escapeTerminal(pr.Message))
		}
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return reportedError{fmt.Sprintf("%s cancelled; its processes were killed", name)}
		}
		return err
	}
	if asJSON {
		out := map[string]any{"isError": res.IsError, "summary": res.Summary, "content": contentJSON(res)}
		if len(res.DetailsJson) > 0 {
			out["details"] = json.RawMessage(res.DetailsJson)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		// When the output already streamed to the same terminal, print only
		// the result's last line (the exit status) instead of all of it again.
		sameTerminal := streamed && isTerminal(stdout) && isTerminal(stderr)
		for _, c := range res.Content {
			switch k := c.Kind.(type) {
			case *pluginv1.Content_Text:
				if sameTerminal {
					lines := strings.Split(strings.TrimRight(k.Text, "\n"), "\n")
					fmt.Fprintln(stdout, lines[len(lines)-1])
					continue
				}
				fmt.Fprint(stdout, k.Text)
				if !strings.HasSuffix(k.Text, "\n") {
					fmt.Fprintln(stdout)
				}
			case *pluginv1.Content_Image:
				fmt.Fprintf(stdout, "[image %s, %d bytes]\n", k.Image.MimeType, len(k.Image.Data))
			}
		}
	}
	if res.Summary != "" {
		fmt.Fprintf(stderr, "%s: %s\n", name, escapeTerminal(res.Summary))
	}
	if res.IsError {
		return reportedError{fmt.Sprintf("%s failed", name)}
	}
	return nil
}

func contentJSON(res *pluginv1.Result) []map[string]any {
	var out []map[string]any
	for _, c := range res.Content {
		switch k := c.Kind.(type) {
		case *pluginv1.Content_Text:
			out = append(out, map[string]any{"type": "text", "text": k.Text})
		case *pluginv1.Content_Image:
			out = append(out, map[string]any{"type": "image", "mimeType": k.Image.MimeType, "data": k.Image.Data})
		}
	}
	return out
}

// denyMessage explains an ask that nobody can answer, with the rules that
// would allow the call.
func denyMessage(p *gate.Prepared, cfgPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s denied: it needs your approval (%s), and there is no terminal to ask on", p.Entry.Name, p.Decision.Reason)
	if len(p.Argv) > 0 {
		fmt.Fprintf(&b, "\n  command: %s", displayArgv(p.Argv))
	}
	if len(p.Suggestions) == 0 {
		b.WriteString("\n  no permission rule can allow it (untrusted tools and repeated calls always ask); run it from a terminal")
		return b.String()
	}
	fmt.Fprintf(&b, "\n  to allow it without asking, add to \"permissions\" in %s:", cfgPath)
	for _, r := range p.Suggestions {
		fmt.Fprintf(&b, "\n    %s", r.JSON())
	}
	return b.String()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// openTTY opens the controlling terminal for a prompt, or returns nil when
// there is none (or stdin is not one: a script, CI).
func openTTY() *os.File {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return nil
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	return f
}

// ask shows the exact call (or the diff of a write) and asks once / always /
// reject / reject with a message. It returns whether to run and the
// rejection message.
func ask(tty *os.File, p *gate.Prepared, root string, preview *session.Preview, cfgPath string) (bool, string, error) {
	a := session.Approval{Tool: p.Entry.Name, Argv: p.Argv, Args: p.Args, Reason: p.Decision.Reason, Root: root}
	if preview != nil {
		a.Diff = preview.Diff
	}
	fmt.Fprintln(tty)
	describeApproval(tty, a)
	r := bufio.NewReader(tty)
	for {
		save := ""
		if len(p.Suggestions) > 0 {
			save = "[s]ave it for always, "
		}
		fmt.Fprintf(tty, "Allow? [o]nce, [a]lways for this session, %s[r]eject, reject with a [m]essage: ", save)
		line, err := r.ReadString('\n')
		if err != nil {
			return false, "", fmt.Errorf("reading your answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "o", "once", "y", "yes":
			return true, "", nil
		case "a", "always":
			return true, "", nil
		case "s", "save":
			if save == "" {
				continue
			}
			if err := config.AddRules(cfgPath, p.Suggestions); err != nil {
				return false, "", fmt.Errorf("saving the approval: %w", err)
			}
			fmt.Fprintf(tty, "Saved into %s; 'opair permissions list' shows it.\n", cfgPath)
			return true, "", nil
		case "r", "reject", "n", "no":
			return false, "", nil
		case "m", "message":
			fmt.Fprint(tty, "Message for the model: ")
			msg, err := r.ReadString('\n')
			if err != nil {
				return false, "", fmt.Errorf("reading your message: %w", err)
			}
			return false, strings.TrimSpace(msg), nil
		}
	}
}
