// Command opair-plugin-exec serves the "exec" handler type: it runs the
// exact command the host's gate approved (no shell, in the project root, in
// its own process group, stdin /dev/null, an allow-listed environment),
// streams its output, and kills it with all its descendants on cancellation
// or timeout. It re-checks the model's arguments against the tool's deny and
// allow lists as a second line of defence; it never prompts.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opair-dev/opair/internal/argfilter"
	"github.com/opair-dev/opair/internal/childenv"
	"github.com/opair-dev/opair/plugins/exec/run"
	"github.com/opair-dev/opair/sdk"
)

// defaultTimeout applies when the host sends none.
const defaultTimeout = 10 * time.Minute

// instanceVar is set by the host on the plugin process; passed on to every
// child, it lets the host find them if this process dies.
const instanceVar = "OPAIR_PLUGIN_INSTANCE"

// handler is the part of an exec tool's handler block this plugin reads.
type handler struct {
	Bin       string   `json:"bin"`
	AllowArgs []string `json:"allowArgs"`
	DenyArgs  []string `json:"denyArgs"`
	Summary   string   `json:"summary"`
}

// details is the structured result for the UI and the session log.
type details struct {
	Argv       []string `json:"argv"`
	ExitCode   int      `json:"exitCode"`
	Signal     string   `json:"signal,omitempty"`
	TimedOut   bool     `json:"timedOut,omitempty"`
	DurationMs int64    `json:"durationMs"`
	TotalBytes int64    `json:"totalBytes"`
	Elided     int64    `json:"elidedBytes,omitempty"`
}

func invoke(ctx context.Context, call *sdk.Call, p sdk.Progress) (*sdk.Result, error) {
	var h handler
	if err := json.Unmarshal(call.Handler, &h); err != nil {
		return nil, fmt.Errorf("decoding the handler block of %s: %w", call.Tool, err)
	}
	argv := call.Command
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil, fmt.Errorf("%s: the host sent no approved command with an absolute binary", call.Tool)
	}
	if call.ModelArgsStart < 1 || call.ModelArgsStart > len(argv) {
		return nil, fmt.Errorf("%s: model arguments start at %d, outside the command of %d words", call.Tool, call.ModelArgsStart, len(argv))
	}
	// The host has checked these; check again, so that a host bug cannot
	// run a denied argument.
	if rej := argfilter.Check(argfilter.StyleFor(h.Bin), h.AllowArgs, h.DenyArgs, argv[call.ModelArgsStart:]); rej != nil {
		return sdk.Errorf("refused: %v", rej), nil
	}
	if fi, err := os.Stat(argv[0]); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the binary %s of %s has vanished since start-up (%v); reinstall it and start a new session", argv[0], call.Tool, err)
	}
	env := make([]string, 0, len(call.Env)+1)
	for _, kv := range call.Env {
		name, _, _ := strings.Cut(kv, "=")
		if childenv.IsSecret(name) {
			continue // never, whatever the host sent
		}
		env = append(env, kv)
	}
	if inst := os.Getenv(instanceVar); inst != "" {
		env = childenv.Merge(env, []string{instanceVar + "=" + inst})
	}
	if filepath.Base(argv[0]) == "git" {
		// Drivers the repository defines by name (filters, textconv) are
		// pinned off before git runs.
		pinned, err := run.PinGitDrivers(ctx, argv[0], call.ProjectRoot, env)
		if err != nil {
			return nil, fmt.Errorf("reading the repository's git drivers before running git: %w", err)
		}
		env = pinned
	}
	timeout := call.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	res, err := run.Run(ctx, run.Spec{
		Path: argv[0], Args: argv[1:], Dir: call.ProjectRoot, Env: env,
		Timeout: timeout, OutputCap: call.OutputCap,
		OnOutput: func(b []byte) { _ = p.Output(b) },
	})
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", filepath.Base(argv[0]), err)
	}
	if res.Canceled {
		return nil, ctx.Err()
	}
	text := string(res.Output)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	switch {
	case res.TimedOut:
		text += fmt.Sprintf("[killed: the command exceeded its timeout of %s]", timeout)
	case res.Signal != "":
		text += fmt.Sprintf("[killed by signal: %s]", res.Signal)
	default:
		text += fmt.Sprintf("[exit status %d]", res.ExitCode)
	}
	return &sdk.Result{
		Content: []sdk.Content{{Text: text}},
		IsError: res.ExitCode != 0 || res.TimedOut,
		Summary: summarize(h.Summary, argv, res, timeout),
		Details: details{Argv: argv, ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut,
			DurationMs: res.Duration.Milliseconds(), TotalBytes: res.TotalBytes, Elided: res.Elided},
	}, nil
}

func main() {
	if err := run.Init(); err != nil {
		sdk.Logger().Warn("descendants that escape their process group may not be found", "error", err)
	}
	sdk.Serve(sdk.Plugin{
		Version: "1.0.0",
		Types: map[string]sdk.Type{
			"exec": {Description: "Runs one specific executable with filtered arguments.", Handler: sdk.HandlerFunc(invoke)},
		},
	})
}
