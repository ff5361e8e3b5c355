package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/provider"
	"github.com/opair-dev/opair/host/session"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

func newRunCmd() *cobra.Command {
	var mode, project string
	c := &cobra.Command{
		Use:   "run PROMPT",
		Short: "Run one headless turn: the model works with the tools, then answers",
		Long: `Run one turn of the main loop without a human at the keyboard: the model
answers PROMPT, calling the tools its mode offers. Its final answer is printed
on stdout; the tool activity on stderr. A call that would ask the human is
denied (ask means deny here, unless the config's permission rules allow it),
and the model is told why.

The model comes from the config's models section, or from the environment:
OPENAI_API_KEY (and OPENAI_BASE_URL) or ANTHROPIC_API_KEY, with OPAIR_MODEL.
The session is logged under the user state directory ('opair sessions list').`,
		Example: `  OPENAI_API_KEY=… OPAIR_MODEL=gpt-5 opair run "why does TestParse fail?"
  opair run --mode driver "rename Foo to Bar in pkg/x and run its tests"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := permission.ParseMode(mode)
			if err != nil {
				return usageError{err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runHeadless(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], m, project)
		},
	}
	c.Flags().StringVar(&mode, "mode", "navigator", "navigator (read, search, test) or driver (may change the project)")
	c.Flags().StringVar(&project, "project", "", "the project root (default: the current directory)")
	return c
}

// startSession sets up the host, the model of the mode's role, and a logged
// session.
func startSession(ctx context.Context, stderr io.Writer, mode permission.Mode, project string, asker session.Asker, obs session.Observer, history []provider.Message, log *session.Log) (*host, *session.Session, *session.Log, error) {
	late := &session.Late{}
	h, err := setupHost(ctx, hostOptions{project: project, logOut: stderr, callbacks: late})
	if err != nil {
		return nil, nil, nil, err
	}
	roles := func(name string) (provider.Provider, session.ModelOptions, error) {
		role, err := h.cfg.Role(name, os.Getenv)
		if err != nil {
			return nil, session.ModelOptions{}, err
		}
		prov, err := provider.FromRole(provider.Spec{ProviderType: role.ProviderType, BaseURL: role.BaseURL, APIKeyEnv: role.APIKeyEnv, Model: role.Model}, os.Getenv)
		if err != nil {
			return nil, session.ModelOptions{}, err
		}
		return prov, session.ModelOptions{Model: role.Model, Temperature: role.Temperature, MaxTokens: role.MaxTokens, ReasoningEffort: role.ReasoningEffort, ContextWindow: role.ContextWindow}, nil
	}
	prov, model, err := roles(string(mode))
	if err != nil {
		h.close()
		return nil, nil, nil, err
	}
	if log == nil {
		state, err := session.StateDir()
		if err != nil {
			h.close()
			return nil, nil, nil, err
		}
		log, err = session.Create(state, session.Meta{ID: session.NewID(), Project: h.root, Mode: string(mode), Loop: string(mode), Model: model.Model, Started: time.Now()})
		if err != nil {
			h.close()
			return nil, nil, nil, err
		}
	}
	s, err := session.New(session.Options{
		Root: h.root, Mode: mode, Config: h.cfg, Registry: h.reg, Plugins: h.plugins, Paths: h.paths,
		Provider: prov,
		Model:    model,
		Asker:    asker, Observer: obs, Log: log, HostEnv: os.Environ(), History: history, ConfigPath: h.cfgPath,
		MCP: mcpCaller(h),
	})
	if err != nil {
		h.close()
		log.Close()
		return nil, nil, nil, err
	}
	late.Set(s.Callbacks(roles))
	return h, s, log, nil
}

func runHeadless(ctx context.Context, stdout, stderr io.Writer, prompt string, mode permission.Mode, project string) error {
	obs := &stderrObserver{w: stderr}
	h, s, log, err := startSession(ctx, stderr, mode, project, nil, obs, nil, nil)
	if err != nil {
		return err
	}
	defer h.close()
	defer log.Close()
	answer, err := s.Turn(ctx, prompt)
	if err != nil {
		if ctx.Err() != nil {
			return reportedError{"cancelled; the session is logged in " + log.Path()}
		}
		return fmt.Errorf("%w (session log: %s)", err, log.Path())
	}
	fmt.Fprintln(stdout, strings.TrimRight(answer, "\n"))
	return nil
}

// stderrObserver shows a headless session's tool activity on stderr.
type stderrObserver struct {
	w io.Writer
}

func (o *stderrObserver) Text(string) {}

func (o *stderrObserver) ToolStart(name string, args json.RawMessage, argv []string) {
	printToolStart(o.w, name, args, argv)
}

func (o *stderrObserver) ToolProgress(string, *pluginv1.Progress) {}

func (o *stderrObserver) ToolEnd(name, summary string, isError bool) {
	printToolEnd(o.w, name, summary, isError)
}

func (o *stderrObserver) Usage(turn, total provider.Usage, ctxTokens, window int) {
	fmt.Fprintf(o.w, "tokens: %d in, %d out this turn; %d in, %d out in the session\n", turn.InputTokens, turn.OutputTokens, total.InputTokens, total.OutputTokens)
}

func (o *stderrObserver) Notice(msg string) { fmt.Fprintf(o.w, "note: %s\n", msg) }

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// mcpCaller is the session's way to the MCP servers, or nil without any.
func mcpCaller(h *host) session.MCPCaller {
	if h.mcp == nil {
		return nil
	}
	return h.mcp
}
