package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opair-dev/opair/host/provider/providertest"
)

// modelEnv points opair at a scripted provider speaking the real OpenAI
// chat-completions protocol.
func modelEnv(srv *providertest.Server, extra ...string) []string {
	return append([]string{"OPENAI_BASE_URL=" + srv.URL(), "OPENAI_API_KEY=test-key", "OPAIR_MODEL=m"}, extra...)
}

type sentTool struct {
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

func requestTools(t *testing.T, body map[string]any) []string {
	t.Helper()
	b, _ := json.Marshal(body["tools"])
	var tools []sentTool
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Function.Name)
	}
	return names
}

func TestRunHeadless(t *testing.T) {
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "notes.txt"), []byte("the answer is 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewOpenAI(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "readProjectFile", Arguments: `{"path":"notes.txt"}`}}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "npmTest", Arguments: `{}`}}},
		providertest.Reply{Text: "The notes say the answer is 42."},
	)
	state := t.TempDir()
	r := opair(t, modelEnv(srv, "XDG_STATE_HOME="+state), "run", "--project", project, "what do the notes say?")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "The notes say the answer is 42." {
		t.Errorf("stdout: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "readProjectFile") {
		t.Errorf("tool activity not on stderr:\n%s", r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	// In navigator mode, no tool that writes the project is offered.
	tools := requestTools(t, reqs[0])
	for _, name := range tools {
		switch name {
		case "editProjectFile", "createProjectFile", "deleteProjectFile", "chmodProjectFile", "replaceInProject":
			t.Errorf("navigator mode offered %s", name)
		}
	}
	if !contains(tools, "readProjectFile") || !contains(tools, "goTest") {
		t.Errorf("offered: %v", tools)
	}
	// The read's result reached the model's next request.
	second, _ := json.Marshal(reqs[1]["messages"])
	if !strings.Contains(string(second), "the answer is 42") {
		t.Errorf("the tool result did not reach the model:\n%s", second)
	}
	// The untrusted tool was denied headless, and the model was told why.
	third, _ := json.Marshal(reqs[2]["messages"])
	if !strings.Contains(string(third), "denied: this call needs the human's approval") || !strings.Contains(string(third), "untrusted") {
		t.Errorf("the denial did not reach the model:\n%s", third)
	}
	// The session is logged.
	logs, _ := filepath.Glob(filepath.Join(state, "opair", "sessions", "*", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("session logs: %v", logs)
	}
	data, _ := os.ReadFile(logs[0])
	for _, want := range []string{`"type":"meta"`, `"type":"user"`, `"type":"decision"`, `"type":"result"`, `"deny (headless)"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("log lacks %s", want)
		}
	}
}

func TestRunDriverOffersWrites(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "ok"})
	r := opair(t, modelEnv(srv, "XDG_STATE_HOME="+t.TempDir()), "run", "--mode", "driver", "--project", t.TempDir(), "hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if tools := requestTools(t, srv.Requests()[0]); !contains(tools, "editProjectFile") {
		t.Errorf("driver mode does not offer editProjectFile: %v", tools)
	}
}

func TestRunWithoutModel(t *testing.T) {
	r := opair(t, []string{"XDG_STATE_HOME=" + t.TempDir()}, "run", "--project", t.TempDir(), "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "OPAIR_MODEL") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRunSubAgent: the model calls plan; the sub-agent plugin runs its own
// loop through the host (the planner's prompt and whitelist, the same gate),
// and its answer comes back as the tool result.
func TestRunSubAgent(t *testing.T) {
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "notes.txt"), []byte("step one: write tests\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewOpenAI(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "plan", Arguments: `{"task":"add a feature"}`}}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "readProjectFile", Arguments: `{"path":"notes.txt"}`}}},
		providertest.Reply{Text: "1. Write tests first."},
		providertest.Reply{Text: "The plan: write tests first."},
	)
	r := opair(t, modelEnv(srv, "XDG_STATE_HOME="+t.TempDir()), "run", "--project", project, "plan a feature")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	sub := messagesOf(t, reqs[1])
	if !strings.Contains(sub, "planning sub-agent") || !strings.Contains(sub, "Plan this task: add a feature") {
		t.Errorf("the sub-agent's request:\n%s", sub)
	}
	subTools := requestTools(t, reqs[1])
	if contains(subTools, "plan") || contains(subTools, "goTest") || !contains(subTools, "readProjectFile") {
		t.Errorf("the sub-agent was offered %v", subTools)
	}
	if m := messagesOf(t, reqs[2]); !strings.Contains(m, "step one: write tests") {
		t.Errorf("the sub-agent's tool result did not reach it:\n%s", m)
	}
	if m := messagesOf(t, reqs[3]); !strings.Contains(m, "1. Write tests first.") {
		t.Errorf("the plan did not reach the main loop:\n%s", m)
	}
	if strings.TrimSpace(r.stdout) != "The plan: write tests first." {
		t.Errorf("stdout %q", r.stdout)
	}
}

// TestReadBeforeEdit: in a session, an edit of a file the model has not
// read is refused, and so is one of a file that changed since it read it;
// after reading, the edit goes through, and a second edit needs no new read.
func TestReadBeforeEdit(t *testing.T) {
	project := t.TempDir()
	target := filepath.Join(project, "a.txt")
	if err := os.WriteFile(target, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := func(from, to string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "editProjectFile", Arguments: `{"path":"a.txt","oldString":"` + from + `","newString":"` + to + `"}`}}}
	}
	read := providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "readProjectFile", Arguments: `{"path":"a.txt"}`}}}
	srv := providertest.NewOpenAI(t,
		edit("one", "two"), // not read: refused
		read,
		edit("one", "two"),   // read: applied
		edit("two", "three"), // its own write is known: applied
		providertest.Reply{Text: "done"},
	)
	env := modelEnv(srv, "XDG_STATE_HOME="+t.TempDir())
	r := opair(t, env, "run", "--mode", "driver", "--project", project, "edit it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if m := messagesOf(t, reqs[1]); !strings.Contains(m, "you have not read a.txt in this session") {
		t.Errorf("unread edit not refused:\n%s", m)
	}
	if got, _ := os.ReadFile(target); string(got) != "three\n" {
		t.Errorf("file: %q", got)
	}

	// A change on disk after the read: the edit is refused, nothing written.
	if err := os.WriteFile(target, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	slowEdit := edit("one", "two")
	slowEdit.Delay = time.Second
	srv2 := providertest.NewOpenAI(t, read, slowEdit, providertest.Reply{Text: "ok"})
	done := make(chan result, 1)
	go func() {
		done <- opair(t, modelEnv(srv2, "XDG_STATE_HOME="+t.TempDir()), "run", "--mode", "driver", "--project", project, "edit it")
	}()
	waitRequests(t, srv2, 2)
	if err := os.WriteFile(target, []byte("one\nanother line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if m := messagesOf(t, srv2.Requests()[2]); !strings.Contains(m, "a.txt changed on disk since you last read it") {
		t.Errorf("stale edit not refused:\n%s", m)
	}
	if got, _ := os.ReadFile(target); string(got) != "one\nanother line\n" {
		t.Errorf("a stale edit was written: %q", got)
	}
}

// The config's loops section narrows what a loop offers.
func TestRunLoopWhitelistFromConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"loops": {"navigator": {"toolWhitelist": ["readProjectFile", "git*"], "systemPrompt": "Only look, never touch."}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "ok"})
	r := opair(t, modelEnv(srv, "OPAIR_CONFIG="+cfg, "XDG_STATE_HOME="+t.TempDir()), "run", "--project", t.TempDir(), "hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	tools := requestTools(t, srv.Requests()[0])
	want := []string{"gitDiff", "gitLog", "gitShow", "gitStatus", "readProjectFile"}
	if strings.Join(tools, ",") != strings.Join(want, ",") {
		t.Errorf("offered %v, want %v", tools, want)
	}
	if m := messagesOf(t, srv.Requests()[0]); !strings.Contains(m, "Only look, never touch.") {
		t.Errorf("system prompt not replaced:\n%s", m)
	}
}

// A binary that vanishes mid-session fails its call with a clear error and
// the tool is no longer offered for the rest of the session.
func TestVanishedBinaryDegradesTheTool(t *testing.T) {
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "mytool")
	src, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("no /bin/true")
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := toolsDirWith(t, map[string]string{"my_tool.json": `{
  "schema": {"type": "function", "function": {"name": "myTool", "description": "Run mytool.", "parameters": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}}},
  "handler": {"type": "exec", "bin": "` + bin + `"}
}`})
	call := providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "myTool", Arguments: `{}`}}}
	call.Delay = 500 * time.Millisecond
	srv := providertest.NewOpenAI(t, call, providertest.Reply{Text: "it is gone"})
	done := make(chan result, 1)
	go func() {
		done <- opair(t, modelEnv(srv, "OPAIR_TOOLS_DIR="+tools, "XDG_STATE_HOME="+t.TempDir()), "run", "--project", t.TempDir(), "run my tool")
	}()
	waitRequests(t, srv, 1)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if m := messagesOf(t, reqs[1]); !strings.Contains(m, "has vanished") {
		t.Errorf("the failure does not say the binary vanished:\n%s", m)
	}
	if !contains(requestTools(t, reqs[0]), "myTool") || contains(requestTools(t, reqs[1]), "myTool") {
		t.Errorf("offered before %v, after %v", requestTools(t, reqs[0]), requestTools(t, reqs[1]))
	}
	if !strings.Contains(r.stderr, "degraded") {
		t.Errorf("no notice:\n%s", r.stderr)
	}
}
