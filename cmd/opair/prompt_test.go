package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

const shoutTool = `{
  "schema": {"type": "function", "function": {"name": "shout", "description": "Echo the arguments.", "parameters": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}}},
  "exec": "untrusted",
  "handler": {"type": "exec", "bin": "echo"}
}`

// ptySession runs opair on a pseudo-terminal and answers its prompt.
type ptySession struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startPTY(t *testing.T, env []string, args ...string) *ptySession {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(opairBin, args...)
	cmd.Env = append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH"), "TERM=dumb"}, env...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				close(s.done)
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); tty.Close() })
	return s
}

func (s *ptySession) waitFor(text string) {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		got := s.out.String()
		s.mu.Unlock()
		if strings.Contains(got, text) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("no %q on the terminal; it shows:\n%s", text, s.output())
}

func (s *ptySession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *ptySession) send(line string) {
	if _, err := io.WriteString(s.tty, line); err != nil {
		s.t.Fatal(err)
	}
}

func (s *ptySession) exit() int {
	err := s.cmd.Wait()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0
}

// TestPromptOnTerminal: an untrusted tool asks on the terminal, showing the
// exact command line with control characters and bidirectional marks
// escaped; each answer does what it says.
func TestPromptOnTerminal(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"shout.json": shoutTool})
	env := []string{"OPAIR_TOOLS_DIR=" + tools}
	args := []string{"tools", "call", "shout", `{"args":["hi","\u001b[2Jclear","evil\u202etxt.exe"]}`, "--project", t.TempDir()}

	s := startPTY(t, env, args...)
	s.waitFor("Allow? [o]nce, [a]lways for this session, [r]eject, reject with a [m]essage:")
	prompt := s.output()
	for _, want := range []string{"shout wants to run:", "/echo hi '\\x1b[2Jclear' 'evil\\u{202e}txt.exe'", "untrusted"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "\x1b[2J") || strings.Contains(prompt, "\u202e") {
		t.Errorf("the prompt shows raw control characters or bidi marks:\n%q", prompt)
	}
	s.send("o\n")
	if code := s.exit(); code != 0 {
		t.Fatalf("approved once: exit %d\n%s", code, s.output())
	}
	if !strings.Contains(s.output(), "[exit status 0]") {
		t.Errorf("the call did not run:\n%s", s.output())
	}

	s = startPTY(t, env, args...)
	s.waitFor("Allow?")
	s.send("r\n")
	if code := s.exit(); code != 1 || !strings.Contains(s.output(), "shout rejected by you") || strings.Contains(s.output(), "[exit status") {
		t.Errorf("reject: exit %d\n%s", code, s.output())
	}

	s = startPTY(t, env, args...)
	s.waitFor("Allow?")
	s.send("m\n")
	s.waitFor("Message for the model:")
	s.send("use the project's own script instead\n")
	if code := s.exit(); code != 1 || !strings.Contains(s.output(), "shout rejected by you: use the project's own script instead") {
		t.Errorf("reject with a message: exit %d\n%s", code, s.output())
	}
}

func TestEscapeTerminal(t *testing.T) {
	cases := map[string]string{
		"plain":        "plain",
		"a\x1b[31mb":   `a\x1b[31mb`,
		"tab\there":    `tab\there`,
		"line\nbreak":  `line\nbreak`,
		"rtl\u202eexe": `rtl\u{202e}exe`,
		"iso\u2066x":   `iso\u{2066}x`,
		"zw\u200bsp":   `zw\u{200b}sp`,
		"c1\u009bx":    `c1\x9bx`,
		"ünïcödé ok":   "ünïcödé ok",
	}
	for in, want := range cases {
		if got := escapeTerminal(in); got != want {
			t.Errorf("escapeTerminal(%q) = %q, want %q", in, got, want)
		}
	}
	if got := displayArgv([]string{"/bin/echo", "a b", "it's", "-x=1"}); got != `/bin/echo 'a b' 'it'\''s' -x=1` {
		t.Errorf("displayArgv: %s", got)
	}
}

const editDotTool = `{
  "schema": {"type": "function", "function": {"name": "editDotFile", "description": "Edit a dot file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "oldString": {"type": "string"}, "newString": {"type": "string"}}, "required": ["path", "oldString", "newString"]}}},
  "handler": {"type": "editFile", "scope": "project-dot"}
}`

// A write that asks shows its diff; approving applies it only if the file
// still holds what the diff was computed from.
func TestPromptShowsTheDiffAndBindsTheApproval(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"edit_dot_file.json": editDotTool})
	project := t.TempDir()
	target := filepath.Join(project, ".settings")
	if err := os.WriteFile(target, []byte("color=red\nsize=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPAIR_TOOLS_DIR=" + tools}
	args := []string{"tools", "call", "editDotFile", `{"path":".settings","oldString":"color=red","newString":"color=blue"}`, "--mode", "driver", "--project", project}

	s := startPTY(t, env, args...)
	s.waitFor("Allow?")
	for _, want := range []string{"editDotFile wants to run, changing:", "--- a/.settings", "+++ b/.settings", "-color=red", "+color=blue"} {
		if !strings.Contains(s.output(), want) {
			t.Errorf("prompt lacks %q:\n%s", want, s.output())
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "color=red\nsize=1\n" {
		t.Fatalf("the preview wrote the file: %q", got)
	}
	s.send("o\n")
	if code := s.exit(); code != 0 {
		t.Fatalf("approve: exit %d\n%s", code, s.output())
	}
	if got, _ := os.ReadFile(target); string(got) != "color=blue\nsize=1\n" {
		t.Errorf("after approval: %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}

	// The file changes between the preview and the answer: nothing is written.
	args[3] = `{"path":".settings","oldString":"size=1","newString":"size=2"}`
	s = startPTY(t, env, args...)
	s.waitFor("Allow?")
	if err := os.WriteFile(target, []byte("color=blue\nsize=1\nextra=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.send("o\n")
	if code := s.exit(); code != 1 || !strings.Contains(s.output(), "changed since the diff was approved") {
		t.Errorf("stale approval: exit %d\n%s", code, s.output())
	}
	if got, _ := os.ReadFile(target); string(got) != "color=blue\nsize=1\nextra=1\n" {
		t.Errorf("a stale approval wrote the file: %q", got)
	}

	// Without a terminal the write is denied, and the rule that would allow
	// it names the path.
	r := opair(t, env, args...)
	if r.code != 1 || !strings.Contains(r.stderr, `{"tool": "editDotFile", "path": ".settings", "action": "allow"}`) {
		t.Errorf("headless: exit %d\n%s", r.code, r.stderr)
	}
}
