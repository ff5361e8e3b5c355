package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/chzyer/readline"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/provider"
	"github.com/opair-dev/opair/host/registry"
	"github.com/opair-dev/opair/host/session"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// interactive is a session at the terminal: a line editor with history, the
// model's text as it streams, tool activity, prompts, slash commands.
type interactive struct {
	rl  *readline.Instance
	out io.Writer
	h   *host
	s   *session.Session

	mu     sync.Mutex
	cancel context.CancelFunc // the running turn's, or nil
}

func runInteractive(ctx context.Context, stdout, stderr io.Writer, mode permission.Mode, project string, resume bool) error {
	if !isTerminal(stdout) || openTTY() == nil {
		return usageError{errors.New("an interactive session needs a terminal; use `opair run \"prompt\"` in scripts")}
	}
	state, err := session.StateDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", state, err)
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          promptFor(mode),
		HistoryFile:     filepath.Join(state, "history"),
		InterruptPrompt: "^C",
		EOFPrompt:       "/quit",
	})
	if err != nil {
		return fmt.Errorf("starting the line editor: %w", err)
	}
	defer rl.Close()
	it := &interactive{rl: rl, out: rl.Stdout()}

	var history []provider.Message
	var log *session.Log
	if resume {
		root, err := projectRoot(project)
		if err != nil {
			return err
		}
		list, err := session.List(state, root)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return reportedError{"no session to continue in " + root}
		}
		entries, err := session.Read(list[0].Path)
		if err != nil {
			return err
		}
		history = session.History(entries)
		for _, e := range entries {
			if e.Type == "mode" {
				mode = permission.Mode(e.Mode)
			}
		}
		if log, err = session.Open(list[0].Path); err != nil {
			return err
		}
		fmt.Fprintf(it.out, "Continuing the session of %s (%d turns, %d messages), in %s mode.\n", list[0].Modified.Format("2006-01-02 15:04"), list[0].Turns, len(history), mode)
	}
	h, s, log, err := startSession(ctx, stderr, mode, project, it, it, history, log)
	if err != nil {
		return err
	}
	defer h.close()
	defer log.Close()
	it.h, it.s = h, s
	rl.SetPrompt(promptFor(s.Mode()))

	// Tool files are watched: a changed file takes effect for the next
	// request.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		_ = h.reg.Watch(wctx, func(ev registry.Event) { it.notice(ev.String()) })
	}()

	// Ctrl-C cancels the running call or turn, never the session.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
			it.mu.Lock()
			if it.cancel != nil {
				it.cancel()
			}
			it.mu.Unlock()
		}
	}()

	fmt.Fprintf(it.out, "Opair in %s, %s mode. /help lists the commands; Ctrl-C cancels a turn, /quit leaves.\n", h.root, s.Mode())
	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "/"):
			if quit := it.slash(ctx, line); quit {
				return nil
			}
		default:
			it.turn(ctx, line)
		}
	}
}

func projectRoot(project string) (string, error) {
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		project = wd
	}
	abs, err := filepath.Abs(project)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, nil
}

func promptFor(m permission.Mode) string { return string(m) + "> " }

// turn runs one turn, cancellable with Ctrl-C.
func (it *interactive) turn(ctx context.Context, text string) {
	tctx, cancel := context.WithCancel(ctx)
	it.mu.Lock()
	it.cancel = cancel
	it.mu.Unlock()
	defer func() {
		it.mu.Lock()
		it.cancel = nil
		it.mu.Unlock()
		cancel()
	}()
	_, err := it.s.Turn(tctx, text)
	fmt.Fprintln(it.out)
	switch {
	case err == nil:
	case tctx.Err() != nil:
		fmt.Fprintln(it.out, "(cancelled)")
	default:
		fmt.Fprintf(it.out, "error: %v\n", err)
	}
}

// slash runs a slash command; it returns true to leave.
func (it *interactive) slash(ctx context.Context, line string) bool {
	name, rest, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	rest = strings.TrimSpace(rest)
	switch name {
	case "quit", "exit":
		return true
	case "driver", "navigator":
		m := permission.Mode(name)
		if err := it.s.SetMode(m); err != nil {
			fmt.Fprintf(it.out, "error: %v\n", err)
		}
		it.rl.SetPrompt(promptFor(m))
		fmt.Fprintf(it.out, "%s mode.\n", m)
		return false
	case "tools":
		it.listTools()
		return false
	case "help":
		it.help()
		return false
	}
	for _, e := range it.h.reg.Snapshot() {
		if e.SlashCommand == name {
			args, err := slashArgs(e, rest)
			if err != nil {
				fmt.Fprintf(it.out, "/%s: %v\n", name, err)
				return false
			}
			tctx, cancel := context.WithCancel(ctx)
			it.mu.Lock()
			it.cancel = cancel
			it.mu.Unlock()
			text, _, _ := it.s.RunTool(tctx, e.Name, args)
			it.mu.Lock()
			it.cancel = nil
			it.mu.Unlock()
			cancel()
			fmt.Fprintln(it.out, strings.TrimRight(text, "\n"))
			return false
		}
	}
	fmt.Fprintf(it.out, "unknown command /%s; /help lists them\n", name)
	return false
}

// slashArgs turns what follows a slash command into the call's arguments:
// a JSON object as it is; for an exec tool, the words as args; for a tool
// with one string parameter, the text as that parameter.
func slashArgs(e *registry.Entry, rest string) (json.RawMessage, error) {
	if rest == "" {
		return json.RawMessage("{}"), nil
	}
	if strings.HasPrefix(rest, "{") {
		if !json.Valid([]byte(rest)) {
			return nil, errors.New("the arguments are not valid JSON")
		}
		return json.RawMessage(rest), nil
	}
	var params struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(e.Parameters, &params)
	if _, ok := params.Properties["args"]; ok {
		b, _ := json.Marshal(map[string][]string{"args": strings.Fields(rest)})
		return b, nil
	}
	var strs []string
	for name, p := range params.Properties {
		if p.Type == "string" {
			strs = append(strs, name)
		}
	}
	sort.Strings(strs)
	target := ""
	switch {
	case len(params.Required) == 1:
		target = params.Required[0]
	case len(strs) == 1:
		target = strs[0]
	}
	if target == "" {
		return nil, fmt.Errorf("write the arguments as a JSON object, e.g. /%s {\"…\": \"…\"}", e.SlashCommand)
	}
	b, _ := json.Marshal(map[string]string{target: rest})
	return b, nil
}

func (it *interactive) listTools() {
	offered := map[string]bool{}
	for _, e := range it.s.Offered() {
		offered[e.Name] = true
	}
	for _, e := range it.h.reg.Snapshot() {
		status := "offered"
		switch {
		case !e.Available:
			status = "unavailable: " + e.Reason
		case e.Internal:
			status = "internal"
		case !offered[e.Name]:
			status = "not offered in " + string(it.s.Mode()) + " mode"
		}
		slash := ""
		if e.SlashCommand != "" {
			slash = " /" + e.SlashCommand
		}
		fmt.Fprintf(it.out, "  %-24s%s  %s\n", e.Name, slash, status)
	}
}

func (it *interactive) help() {
	fmt.Fprint(it.out, `Type a request for the model. Commands:
  /navigator   read, search, run tests; nothing that writes the project is offered
  /driver      the model may also change the project, gated
  /tools       the tools and whether they are offered
  /help        this help
  /quit        leave (Ctrl-D too)
Ctrl-C cancels the running call or turn, not the session.
`)
	var cmds []string
	for _, e := range it.h.reg.Snapshot() {
		if e.SlashCommand != "" {
			cmds = append(cmds, fmt.Sprintf("  /%-11s runs %s", e.SlashCommand, e.Name))
		}
	}
	if len(cmds) > 0 {
		fmt.Fprintln(it.out, "Tool commands (what follows the command becomes the arguments):")
		fmt.Fprintln(it.out, strings.Join(cmds, "\n"))
	}
}

func (it *interactive) notice(msg string) {
	fmt.Fprintf(it.out, "\n[%s]\n", escapeTerminal(msg))
	it.rl.Refresh()
}

// Observer.

func (it *interactive) Text(delta string) { fmt.Fprint(it.out, delta) }

func (it *interactive) ToolStart(name string, args json.RawMessage, argv []string) {
	fmt.Fprintln(it.out)
	printToolStart(it.out, name, args, argv)
}

func (it *interactive) ToolProgress(name string, p *pluginv1.Progress) {
	if len(p.Output) > 0 {
		_, _ = it.out.Write(p.Output)
	}
}

func (it *interactive) ToolEnd(name, summary string, isError bool) {
	printToolEnd(it.out, name, summary, isError)
}

func (it *interactive) Usage(turn, total provider.Usage, ctxTokens, window int) {
	fmt.Fprintf(it.out, "\n[tokens: %d in, %d out; session %d in, %d out; context %d of %d]\n",
		turn.InputTokens, turn.OutputTokens, total.InputTokens, total.OutputTokens, ctxTokens, window)
}

func (it *interactive) Notice(msg string) { fmt.Fprintf(it.out, "\n[%s]\n", escapeTerminal(msg)) }

// Asker.

func (it *interactive) readAnswer(prompt string) (string, error) {
	it.rl.SetPrompt(prompt)
	defer it.rl.SetPrompt(promptFor(it.s.Mode()))
	line, err := it.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", context.Canceled
	}
	return strings.TrimSpace(line), err
}

func (it *interactive) Approve(ctx context.Context, a session.Approval) (session.Answer, error) {
	fmt.Fprintln(it.out)
	describeApproval(it.out, a)
	always := "[a]lways for this session, [s]ave it for always"
	if !a.CanAlways {
		always = "[a]lways (counts as once: this call always asks)"
	}
	for {
		ans, err := it.readAnswer("Allow? [o]nce, " + always + ", [r]eject, reject with a [m]essage: ")
		if err != nil {
			return session.Answer{Kind: session.Reject}, err
		}
		switch strings.ToLower(ans) {
		case "o", "once", "y", "yes":
			return session.Answer{Kind: session.Once}, nil
		case "a", "always":
			return session.Answer{Kind: session.Always}, nil
		case "s", "save":
			return session.Answer{Kind: session.SaveAlways}, nil
		case "r", "reject", "n", "no":
			return session.Answer{Kind: session.Reject}, nil
		case "m", "message":
			msg, err := it.readAnswer("Message for the model: ")
			if err != nil {
				return session.Answer{Kind: session.Reject}, err
			}
			return session.Answer{Kind: session.RejectWithMessage, Message: msg}, nil
		}
	}
}

func (it *interactive) Question(ctx context.Context, question string, options []string, allowCustom bool) (string, bool, error) {
	fmt.Fprintf(it.out, "\nThe model asks: %s\n", escapeTerminal(question))
	for i, o := range options {
		fmt.Fprintf(it.out, "  %d) %s\n", i+1, escapeTerminal(o))
	}
	hint := "Your answer (empty to decline): "
	if len(options) > 0 && !allowCustom {
		hint = fmt.Sprintf("Pick 1-%d (empty to decline): ", len(options))
	}
	for {
		ans, err := it.readAnswer(hint)
		if err != nil {
			return "", true, err
		}
		if ans == "" {
			return "", true, nil
		}
		if n, err := strconv.Atoi(ans); err == nil && n >= 1 && n <= len(options) {
			return options[n-1], false, nil
		}
		if allowCustom || len(options) == 0 {
			return ans, false, nil
		}
	}
}
