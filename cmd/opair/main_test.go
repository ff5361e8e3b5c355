package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// opairBin is the opair binary built once for these tests: they run it as a
// user would, as a child process with its own environment.
var opairBin string

// testBin holds helper programs the tests use as tool binaries.
var testBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "opair-cli-test")
	if err != nil {
		panic(err)
	}
	opairBin = filepath.Join(dir, "opair")
	if runtime.GOOS == "windows" {
		opairBin += ".exe"
	}
	// opair and the built-in plugins side by side, as `go install` leaves
	// them; the example third-party plugin and test helpers elsewhere.
	testBin = filepath.Join(dir, "testbin")
	for _, b := range [][]string{
		{"go", "build", "-o", dir + "/", ".", "../../plugins/exec/opair-plugin-exec", "../../plugins/builtin/opair-plugin-builtin", "../../plugins/subagent/opair-plugin-subagent"},
		{"go", "build", "-o", filepath.Join(dir, "plugins") + "/", "../../examples/opair-plugin-jsonpointer"},
		{"go", "build", "-o", testBin + "/", "./testdata/spawner"},
	} {
		build := exec.Command(b[0], b[1:]...)
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			panic(fmt.Sprintf("%v: %v", b, err))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// opair runs the built binary with a clean configuration: HOME and
// XDG_CONFIG_HOME point into a temporary directory, so the user's own tools
// never leak in. env adds variables.
func opair(t *testing.T, env []string, args ...string) result {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(opairBin, args...)
	cmd.Env = append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running opair: %v", err)
	}
	return result{out.String(), errb.String(), code}
}

var defaultTools = []string{"readProjectFile", "readProjectFileLines", "readProjectFileBytes", "listProjectDirectory",
	"findInProject", "createProjectFile", "editProjectFile", "deleteProjectFile", "chmodProjectFile", "replaceInProject",
	"readExternalFile", "listExternalDirectory", "gitStatus", "gitDiff", "gitLog", "gitShow", "goTest", "goBuild", "goVet",
	"gofmt", "cargoTest", "npmTest", "askQuestion", "plan", "reviewDiff"}

func TestToolsListDefaults(t *testing.T) {
	r := opair(t, nil, "tools", "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "Tools from embedded defaults") {
		t.Errorf("source not named:\n%s", r.stdout)
	}
	for _, name := range defaultTools {
		if !regexp.MustCompile(`(?m)^` + name + `\s`).MatchString(r.stdout) {
			t.Errorf("default tool %s not listed", name)
		}
	}

	r = opair(t, nil, "tools", "list", "--json")
	var doc struct {
		Source string
		Tools  []listedTool
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("--json output: %v\n%s", err, r.stdout)
	}
	byName := map[string]listedTool{}
	for _, lt := range doc.Tools {
		byName[lt.Name] = lt
	}
	if npm := byName["npmTest"]; !npm.Untrusted || npm.Type != "exec" {
		t.Errorf("npmTest: %+v", npm)
	}
	if rf := byName["readExternalFile"]; rf.Scope != "external" || rf.Reads != "external" || rf.Writes != "none" {
		t.Errorf("readExternalFile: %+v", rf)
	}
	if ef := byName["editProjectFile"]; ef.Writes != "project" {
		t.Errorf("editProjectFile: %+v", ef)
	}
	if rd := byName["reviewDiff"]; rd.SlashCommand != "review-diff" {
		t.Errorf("reviewDiff: %+v", rd)
	}
}

func TestUnavailableTool(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "frob_it.json", `{
  "schema": {"type": "function", "function": {"name": "frobIt", "description": "Frobs.", "parameters": {"type": "object"}}},
  "handler": {"type": "exec", "bin": "opair-no-such-binary-xyz"}
}`)
	writeTool(t, dir, "plan.json", `{
  "schema": {"type": "function", "function": {"name": "plan", "description": "Plans.", "parameters": {"type": "object"}}},
  "requiresBin": "opair-no-such-vcs"
}`)
	r := opair(t, []string{"OPAIR_TOOLS_DIR=" + dir}, "tools", "list", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct{ Tools []listedTool }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tools) != 2 {
		t.Fatalf("tools: %+v", doc.Tools)
	}
	for _, lt := range doc.Tools {
		if lt.Available || !strings.Contains(lt.Reason, "not found on PATH") {
			t.Errorf("%s: available=%v reason=%q", lt.Name, lt.Available, lt.Reason)
		}
	}
	if !strings.Contains(doc.Tools[1].Reason, `requiresBin "opair-no-such-vcs"`) {
		t.Errorf("reason does not name requiresBin: %q", doc.Tools[1].Reason)
	}
}

func writeTool(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The seed reference's goTest example, verbatim.
const seedGoTest = `{
  "internal": false,
  "schema": {
    "function": {
      "description": "Run ` + "`go test`" + ` from the project root to execute Go tests. All go test args are supported except ` + "`-coverprofile`, `-exec` and `-toolexec`" + `.",
      "name": "goTest",
      "parameters": {
        "properties": {
          "args": {
            "description": "Arguments for go test.",
            "items": { "type": "string" },
            "type": "array"
          }
        },
        "required": [],
        "type": "object"
      },
      "strict": true
    },
    "type": "function"
  },
  "writes": "artifacts",
  "handler": {
    "denyArgs": ["-coverprofile", "-exec", "-toolexec"],
    "type": "exec",
    "bin": "go",
    "subcommand": "test"
  }
}
`

func TestValidateSeedExample(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "go_test.json", seedGoTest)
	r := opair(t, []string{"OPAIR_TOOLS_DIR=" + dir}, "tools", "validate")
	if r.code != 0 || !strings.Contains(r.stdout, "1 tool valid") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = opair(t, nil, "tools", "validate", dir)
	if r.code != 0 {
		t.Fatalf("validate DIR: exit %d: %s", r.code, r.stderr)
	}
}

var diagLine = regexp.MustCompile(`(?m)^(\S+\.json):(\d+):(\d+): (.*)$`)

// diagnostics returns the validate errors by file base name.
func diagnostics(stderr string) map[string][]string {
	out := map[string][]string{}
	for _, m := range diagLine.FindAllStringSubmatch(stderr, -1) {
		out[filepath.Base(m[1])] = append(out[filepath.Base(m[1])], m[2]+":"+m[3]+": "+m[4])
	}
	return out
}

// TestValidateBrokenDirectory: a directory of files that each break one rule
// fails as a whole, every file is named with a line number, and fixing one
// file removes exactly its errors.
func TestValidateBrokenDirectory(t *testing.T) {
	dir := t.TempDir()
	src, err := filepath.Glob("testdata/broken/*.json")
	if err != nil || len(src) < 16 {
		t.Fatalf("testdata: %v %d", err, len(src))
	}
	for _, f := range src {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeTool(t, dir, filepath.Base(f), string(data))
	}
	before := opair(t, nil, "tools", "validate", dir)
	if before.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", before.code, before.stderr)
	}
	diags := diagnostics(before.stderr)
	for _, f := range src {
		if len(diags[filepath.Base(f)]) == 0 {
			t.Errorf("%s not named with a line number in:\n%s", filepath.Base(f), before.stderr)
		}
	}
	wants := map[string]string{
		"strict_case_variant.json":   `key "DENYARGS" in handler differs from the field "denyArgs" only by case`,
		"strict_duplicate_key.json":  `duplicate key "denyArgs" in "handler"`,
		"strict_invalid_utf8.json":   `invalid UTF-8 in the value of "schema.function.description"`,
		"strict_env_ld_preload.json": `handler.env may not set "LD_PRELOAD"`,
		"strict_unknown_field.json":  `unknown field "denyArg" in handler`,
		"rule2_wrong_name.json":      `file name rule2_wrong_name.json does not match`,
	}
	for file, want := range wants {
		if got := strings.Join(diags[file], "\n"); !strings.Contains(got, want) {
			t.Errorf("%s: want %q, got %q", file, want, got)
		}
	}
	if !strings.Contains(before.stderr, "hint: did you mean \"denyArgs\"?") {
		t.Errorf("unknown field has no nearest-field hint:\n%s", before.stderr)
	}

	// Fix one file: exactly its errors disappear.
	fixed := "rule10_summary.json"
	data, _ := os.ReadFile(filepath.Join(dir, fixed))
	writeTool(t, dir, fixed, strings.Replace(string(data), `"gitstat"`, `"gitStatus"`, 1))
	after := opair(t, nil, "tools", "validate", dir)
	if after.code != 1 {
		t.Fatalf("exit %d after fixing one file", after.code)
	}
	diagsAfter := diagnostics(after.stderr)
	if len(diagsAfter[fixed]) != 0 {
		t.Errorf("fixed file still reported: %v", diagsAfter[fixed])
	}
	delete(diags, fixed)
	if !equalDiags(diags, diagsAfter) {
		t.Errorf("other errors changed:\nbefore %v\nafter  %v", diags, diagsAfter)
	}
	if !strings.Contains(after.stderr, "15 errors in 15 files") {
		t.Errorf("summary line: %s", after.stderr)
	}
}

func equalDiags(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if strings.Join(v, "\n") != strings.Join(w, "\n") {
			return false
		}
	}
	return true
}

// One invalid file prevents start-up: list refuses to run on it.
func TestInvalidFileBlocksStartup(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "go_test.json", seedGoTest)
	data, _ := os.ReadFile("testdata/broken/strict_case_variant.json")
	writeTool(t, dir, "strict_case_variant.json", string(data))
	r := opair(t, []string{"OPAIR_TOOLS_DIR=" + dir}, "tools", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "DENYARGS") || strings.Contains(r.stdout, "goTest") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestToolsShow(t *testing.T) {
	r := opair(t, nil, "tools", "show", "editProjectFile")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"In navigator mode:  not offered",
		"In driver mode:     allow",
		"Writes:             project (derived from type and scope)",
		`"name": "editProjectFile"`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %q in:\n%s", want, r.stdout)
		}
	}
	r = opair(t, nil, "tools", "show", "npmTest")
	for _, want := range []string{"In navigator mode:  ask (untrusted", "In driver mode:     ask (untrusted", "Command:            npm test <args…>"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %q in:\n%s", want, r.stdout)
		}
	}
	r = opair(t, nil, "tools", "show", "readExternalFile")
	if !strings.Contains(r.stdout, "In navigator mode:  ask (reads outside the project)") {
		t.Errorf("readExternalFile gating:\n%s", r.stdout)
	}
	r = opair(t, nil, "tools", "show", "noSuchTool")
	if r.code != 1 || !strings.Contains(r.stderr, `no tool named "noSuchTool"`) {
		t.Errorf("unknown tool: exit %d %s", r.code, r.stderr)
	}
}

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	env := []string{"OPAIR_TOOLS_DIR=" + dir}
	r := opair(t, env, "init")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(defaultTools) || strings.Count(r.stdout, "wrote ") != len(defaultTools) {
		t.Fatalf("wrote %d files:\n%s", len(entries), r.stdout)
	}
	// A user's edit survives a second init, which reports it skipped.
	mine := filepath.Join(dir, "go_test.json")
	if err := os.WriteFile(mine, []byte(seedGoTest), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "gofmt.json"))
	r = opair(t, env, "init")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(mine); string(got) != seedGoTest {
		t.Error("init overwrote an existing file")
	}
	if !strings.Contains(r.stdout, "skipped "+mine) || !strings.Contains(r.stdout, "wrote   "+filepath.Join(dir, "gofmt.json")) {
		t.Errorf("second init output:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "1 written, 24 skipped") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	// The written set is what the session now loads.
	r = opair(t, env, "tools", "validate")
	if r.code != 0 || !strings.Contains(r.stdout, "25 tools valid") {
		t.Errorf("validate after init: %d %s %s", r.code, r.stdout, r.stderr)
	}
	entries, _ = os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			t.Errorf("temporary file left behind: %s", n)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{"tools", "show"},
		{"tools", "validate", "a", "b"},
		{"tools", "list", "--bogus"},
		{"version", "extra"},
		{"nosuchcommand"},
	}
	for _, args := range cases {
		r := opair(t, nil, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "opair --help") {
			t.Errorf("%v: no pointer to --help: %q", args, r.stderr)
		}
	}
	for _, args := range [][]string{{"--help"}, {"tools", "--help"}, {"tools", "list", "--help"}, {"tools", "validate", "--help"}, {"tools", "show", "--help"}, {"init", "--help"}, {"version", "--help"}} {
		r := opair(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
	r := opair(t, nil, "tools", "validate", filepath.Join(t.TempDir(), "missing"))
	if r.code != 1 || !strings.Contains(r.stderr, "no such file or directory") {
		t.Errorf("missing dir: %d %q", r.code, r.stderr)
	}
	r = opair(t, []string{"OPAIR_TOOLS_DIR=" + filepath.Join(t.TempDir(), "missing")}, "tools", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "opair init") {
		t.Errorf("explicit missing tools dir: %d %q", r.code, r.stderr)
	}
}

func TestVersion(t *testing.T) {
	r := opair(t, nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "opair ") || !strings.Contains(r.stdout, runtime.Version()) {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
}
