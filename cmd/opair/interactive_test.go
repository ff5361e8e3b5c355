package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opair-dev/opair/host/provider/providertest"
)

func messagesOf(t *testing.T, req map[string]any) string {
	t.Helper()
	b, err := json.Marshal(req["messages"])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitRequests waits until the scripted provider has seen n requests.
func waitRequests(t *testing.T, srv *providertest.Server, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if r := srv.Requests(); len(r) >= n {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the provider saw %d requests, want %d", len(srv.Requests()), n)
	return nil
}

// TestInteractiveDriverEdit: under a pseudo-terminal, a driver-mode edit
// that the config says to ask about shows its diff; approving once applies
// it; rejecting with a message returns that message to the model.
func TestInteractiveDriverEdit(t *testing.T) {
	project := t.TempDir()
	target := filepath.Join(project, "a.txt")
	if err := os.WriteFile(target, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"permissions": [{"tool": "editProjectFile", "action": "ask"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewOpenAI(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "readProjectFile", Arguments: `{"path":"a.txt"}`}}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "editProjectFile", Arguments: `{"path":"a.txt","oldString":"one","newString":"two"}`}}},
		providertest.Reply{Text: "Changed one to two."},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "editProjectFile", Arguments: `{"path":"a.txt","oldString":"two","newString":"three"}`}}},
		providertest.Reply{Text: "Understood, I will leave it."},
	)
	env := modelEnv(srv, "OPAIR_CONFIG="+cfg, "XDG_STATE_HOME="+t.TempDir())
	s := startPTY(t, env, "--mode", "driver", "--project", project)
	s.waitFor("driver> ")
	s.send("change one to two\r")
	s.waitFor("Allow?")
	for _, want := range []string{"editProjectFile wants to run, changing:", "--- a/a.txt", "-one", "+two"} {
		if !strings.Contains(s.output(), want) {
			t.Errorf("prompt lacks %q:\n%s", want, s.output())
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "one\n" {
		t.Fatalf("written before approval: %q", got)
	}
	s.send("o\r")
	s.waitFor("Changed one to two.")
	if got, _ := os.ReadFile(target); string(got) != "two\n" {
		t.Errorf("after approval: %q", got)
	}

	s.send("now make it three\r")
	s.waitFor("Allow?")
	s.send("m\r")
	s.waitFor("Message for the model:")
	s.send("keep it at two\r")
	s.waitFor("Understood, I will leave it.")
	if got, _ := os.ReadFile(target); string(got) != "two\n" {
		t.Errorf("a rejected edit was written: %q", got)
	}
	reqs := srv.Requests()
	if msgs := messagesOf(t, reqs[4]); !strings.Contains(msgs, "the human rejected this call, saying: keep it at two") {
		t.Errorf("the rejection message did not reach the model:\n%s", msgs)
	}
	s.send("/quit\r")
	if code := s.exit(); code != 0 {
		t.Errorf("exit %d\n%s", code, s.output())
	}
}

// TestInteractiveHotReload: editing a tool file during a session changes
// the schema the next request carries, without a restart.
func TestInteractiveHotReload(t *testing.T) {
	tools := filepath.Join(t.TempDir(), "tools")
	if r := opair(t, []string{"OPAIR_TOOLS_DIR=" + tools}, "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "first"}, providertest.Reply{Text: "second"})
	s := startPTY(t, modelEnv(srv, "OPAIR_TOOLS_DIR="+tools, "XDG_STATE_HOME="+t.TempDir()), "--project", t.TempDir())
	s.waitFor("navigator> ")
	s.send("hello\r")
	s.waitFor("first")
	file := filepath.Join(tools, "go_test.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	fn := doc["schema"].(map[string]any)["function"].(map[string]any)
	fn["description"] = "Run the tests, now with a reloaded description."
	out, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitFor("goTest")
	s.send("again\r")
	s.waitFor("second")
	reqs := srv.Requests()
	b, _ := json.Marshal(reqs[1]["tools"])
	if !strings.Contains(string(b), "now with a reloaded description") {
		t.Errorf("the second request does not carry the edited schema:\n%s", b)
	}
	b, _ = json.Marshal(reqs[0]["tools"])
	if strings.Contains(string(b), "reloaded description") {
		t.Error("the first request already had it")
	}
	s.send("/quit\r")
	s.exit()
}

// TestContinueAfterKill: killing opair mid-turn and running
// `opair --continue` resumes with the full history.
func TestContinueAfterKill(t *testing.T) {
	project := t.TempDir()
	state := t.TempDir()
	srv := providertest.NewOpenAI(t,
		providertest.Reply{Text: "The first answer."},
		providertest.Reply{Hang: true, Text: "never finished"},
		providertest.Reply{Text: "Resumed."},
	)
	env := modelEnv(srv, "XDG_STATE_HOME="+state)
	s := startPTY(t, env, "--project", project)
	s.waitFor("navigator> ")
	s.send("remember the word pelican\r")
	s.waitFor("The first answer.")
	s.send("what was the word?\r")
	waitRequests(t, srv, 2)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.exit()

	r := opair(t, []string{"XDG_STATE_HOME=" + state}, "sessions", "list", "--project", project)
	if r.code != 0 || !strings.Contains(r.stdout, "remember the word pelican") {
		t.Errorf("sessions list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	s = startPTY(t, env, "--continue", "--project", project)
	s.waitFor("Continuing the session")
	s.waitFor("navigator> ")
	s.send("go on\r")
	s.waitFor("Resumed.")
	reqs := srv.Requests()
	msgs := messagesOf(t, reqs[len(reqs)-1])
	for _, want := range []string{"remember the word pelican", "The first answer.", "what was the word?", "go on"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("the resumed request lacks %q:\n%s", want, msgs)
		}
	}
	s.send("/quit\r")
	s.exit()
}

// TestInteractiveCtrlCAndQuestions: Ctrl-C cancels the running turn, not
// the session; askQuestion asks the human with its options.
func TestInteractiveCtrlCAndQuestions(t *testing.T) {
	srv := providertest.NewOpenAI(t,
		providertest.Reply{Hang: true, Text: "this never ends"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "askQuestion", Arguments: `{"question":"Which database?","options":["postgres","sqlite"]}`}}},
		providertest.Reply{Text: "Going with the one you picked."},
	)
	s := startPTY(t, modelEnv(srv, "XDG_STATE_HOME="+t.TempDir()), "--project", t.TempDir())
	s.waitFor("navigator> ")
	s.send("start something long\r")
	waitRequests(t, srv, 1)
	s.waitFor("this")
	s.send("\x03")
	s.waitFor("(cancelled)")
	s.send("which database should we use?\r")
	s.waitFor("The model asks: Which database?")
	s.waitFor("2) sqlite")
	s.send("2\r")
	s.waitFor("Going with the one you picked.")
	if m := messagesOf(t, srv.Requests()[2]); !strings.Contains(m, `"content":"sqlite"`) {
		t.Errorf("the answer did not reach the model:\n%s", m)
	}
	s.send("/quit\r")
	if code := s.exit(); code != 0 {
		t.Errorf("exit %d\n%s", code, s.output())
	}
}

// "Save it for always" writes the rule into the user's config; the next
// session does not ask; `opair permissions` lists and revokes it.
func TestSavedApprovals(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"cat_etc.json": externalTool})
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewOpenAI(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "catEtc", Arguments: `{"args":["/etc/hostname"]}`}}},
		providertest.Reply{Text: "read it"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "catEtc", Arguments: `{"args":["/etc/hostname"]}`}}},
		providertest.Reply{Text: "read it again"},
	)
	env := modelEnv(srv, "OPAIR_TOOLS_DIR="+tools, "OPAIR_CONFIG="+cfg, "XDG_STATE_HOME="+t.TempDir())
	s := startPTY(t, env, "--project", t.TempDir())
	s.waitFor("navigator> ")
	s.send("read the hostname\r")
	s.waitFor("[s]ave it for always")
	s.send("s\r")
	s.waitFor("read it")
	s.send("/quit\r")
	s.exit()

	r := opair(t, []string{"OPAIR_CONFIG=" + cfg}, "permissions", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "catEtc") || !strings.Contains(r.stdout, "/etc/hostname") {
		t.Fatalf("list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The next session (headless here) is allowed by the saved rule.
	r = opair(t, env, "run", "--project", t.TempDir(), "again")
	if r.code != 0 || !strings.Contains(r.stdout, "read it again") {
		t.Fatalf("run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if m := messagesOf(t, srv.Requests()[3]); !strings.Contains(m, "[exit status 0]") {
		t.Errorf("the saved rule did not allow the call:\n%s", m)
	}
	r = opair(t, []string{"OPAIR_CONFIG=" + cfg}, "permissions", "revoke", "1")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed rule 1") {
		t.Fatalf("revoke: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = opair(t, []string{"OPAIR_CONFIG=" + cfg}, "permissions", "list")
	if !strings.Contains(r.stdout, "No permission rules") {
		t.Errorf("after revoke: %s", r.stdout)
	}
}
