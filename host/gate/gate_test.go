package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opair-dev/opair/host/config"
	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/registry"
	"github.com/opair-dev/opair/host/toolfile"
)

func entry(t *testing.T, name, src, binPath string) *registry.Entry {
	t.Helper()
	tl, errs := toolfile.Parse(toolfile.FileName(name), []byte(src), toolfile.FirstParty())
	if errs != nil {
		t.Fatal(errs)
	}
	return &registry.Entry{Tool: tl, Available: true, BinPath: binPath}
}

func execTool(name, bin, extraHandler, extraTop string) string {
	return `{` + extraTop + `
  "schema": {"type": "function", "function": {"name": "` + name + `", "description": "d",
    "parameters": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}, "maxItems": 5}}, "additionalProperties": false}}},
  "handler": {"type": "exec", "bin": "` + bin + `"` + extraHandler + `}
}`
}

func TestPrepareExec(t *testing.T) {
	root := t.TempDir()
	g := &Gate{Root: root, Mode: permission.Navigator, HostEnv: []string{"PATH=/usr/bin:/bin:.", "HOME=/home/u", "OPENAI_API_KEY=sk-x", "GOFLAGS=-exec=x", "LANG=C"}}
	e := entry(t, "gitDiff", execTool("gitDiff", "git", `, "subcommand": "diff", "denyArgs": ["--output", "-c"], "env": {"LC_ALL": "C"}`, ""), "/usr/bin/git")
	p, err := g.Prepare(e, json.RawMessage(`{"args": ["--cached", "HEAD"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/git", "diff", "--no-ext-diff", "--no-textconv", "--cached", "HEAD"}
	if !slices.Equal(p.Argv, want) || int(p.Request.Command.ModelArgsStart) != 4 {
		t.Errorf("argv %q start %d", p.Argv, p.Request.Command.ModelArgsStart)
	}
	env := strings.Join(p.Request.Command.Env, "\n")
	for _, bad := range []string{"OPENAI_API_KEY", "GOFLAGS=-exec", ":."} {
		if strings.Contains(env, bad) {
			t.Errorf("environment carries %s:\n%s", bad, env)
		}
	}
	for _, good := range []string{"LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin", "HOME=/home/u"} {
		if !strings.Contains(env, good) {
			t.Errorf("environment lacks %s:\n%s", good, env)
		}
	}
	if p.Decision.Action != permission.Allow {
		t.Errorf("decision %v", p.Decision)
	}
	if p.Request.Limits.TimeoutMs != config.DefaultTimeout.Milliseconds() {
		t.Errorf("timeout %d", p.Request.Limits.TimeoutMs)
	}

	for _, tc := range []struct{ args, want string }{
		{`{"args": ["--out=/tmp/x"]}`, `denied by denyArgs prefix "--output"`},
		{`{"args": ["-ccore.pager=sh"]}`, `denied by denyArgs prefix "-c"`},
		{`{"args": ["a\nb"]}`, "newline"},
		{`{"args": "HEAD"}`, "do not match the tool's parameters"},
		{`{"args": ["1","2","3","4","5","6"]}`, "do not match the tool's parameters"},
		{`{"argz": []}`, "do not match the tool's parameters"},
		{`[1]`, "must be a JSON object"},
	} {
		_, err := g.Prepare(e, json.RawMessage(tc.args))
		var r *Refusal
		if !asRefusal(err, &r) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want a refusal with %q, got %v", tc.args, tc.want, err)
		}
	}
}

func asRefusal(err error, r **Refusal) bool {
	rr, ok := err.(*Refusal)
	*r = rr
	return ok
}

func TestPrepareDecisions(t *testing.T) {
	root := t.TempDir()
	inside := filepath.Join(root, "bin", "tool")
	if err := os.MkdirAll(filepath.Dir(inside), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Exec: config.Exec{Timeout: config.DefaultTimeout, OutputCap: config.DefaultOutputCap}}
	g := &Gate{Root: root, Mode: permission.Navigator, Config: cfg, Recent: permission.NewRecent(0)}

	// A binary inside the project is untrusted: it asks, and no rule helps.
	local := entry(t, "localTool", execTool("localTool", "/opt/tool", "", ""), inside)
	p, err := g.Prepare(local, nil)
	if err != nil || p.Decision.Action != permission.Ask || len(p.Suggestions) != 0 {
		t.Fatalf("binary inside the project: %v %+v", err, p)
	}

	// Writes beyond artifacts are not offered in navigator mode, asked in driver.
	writer := entry(t, "writeOut", execTool("writeOut", "tee", "", `"writes": "project-dot",`), "/usr/bin/tee")
	if p, _ := g.Prepare(writer, nil); p.Decision.Action != permission.NotOffered {
		t.Errorf("navigator: %v", p.Decision)
	}
	g.Mode = permission.Driver
	p, _ = g.Prepare(writer, json.RawMessage(`{"args": ["x"]}`))
	if p.Decision.Action != permission.Ask || len(p.Suggestions) != 1 || p.Suggestions[0].Args != "x" {
		t.Errorf("driver: %v %v", p.Decision, p.Suggestions)
	}
	cfg.Permissions = []permission.Rule{{Tool: "writeOut", Args: "*", Action: permission.Allow, Source: "test:1"}}
	if p, _ := g.Prepare(writer, json.RawMessage(`{"args": ["x"]}`)); p.Decision.Action != permission.Allow {
		t.Errorf("with an allow rule: %v", p.Decision)
	}

	// The third identical call in a row asks, whatever the rules say.
	reader := entry(t, "lister", execTool("lister", "ls", "", ""), "/bin/ls")
	for i := 0; i < 3; i++ {
		p, err := g.Prepare(reader, json.RawMessage(`{"args": ["-l"]}`))
		if err != nil {
			t.Fatal(err)
		}
		want := permission.Allow
		if i == 2 {
			want = permission.Ask
		}
		if p.Decision.Action != want {
			t.Errorf("call %d: %v", i+1, p.Decision)
		}
		g.Record(p)
	}

	// An unavailable tool is refused before anything else.
	gone := entry(t, "gone", execTool("gone", "nope", "", ""), "")
	gone.Available, gone.Reason = false, "handler.bin \"nope\" not found on PATH"
	if _, err := g.Prepare(gone, nil); err == nil || !strings.Contains(err.Error(), "not found on PATH") {
		t.Errorf("unavailable: %v", err)
	}
}
