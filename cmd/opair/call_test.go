package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goEnv passes the Go caches through, so that the go commands that tools run
// in these tests reuse the build cache instead of compiling the standard
// library from scratch.
func goEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	return env
}

// goModule makes a Go module with one package and a test that passes, or
// fails when pass is false.
func goModule(t *testing.T, pass bool) string {
	t.Helper()
	dir := t.TempDir()
	want := "3"
	if !pass {
		want = "4"
	}
	files := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.26\n",
		"m.go":          "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go":     "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != " + want + " {\n\t\tt.Fatal(\"Add(1, 2) is wrong\")\n\t}\n}\n",
		"sub/s.go":      "package sub\n",
		"sub/s_test.go": "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {}\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCallGoTest(t *testing.T) {
	dir := goModule(t, true)
	r := opair(t, goEnv(t), "tools", "call", "goTest", `{"args":["./..."]}`, "--project", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "go test ./...\n") || !strings.Contains(r.stderr, "ok  \texample.com/m") {
		t.Errorf("progress not streamed to stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "ok  \texample.com/m/sub") || !strings.Contains(r.stdout, "[exit status 0]") {
		t.Errorf("result:\n%s", r.stdout)
	}

	dir = goModule(t, false)
	r = opair(t, goEnv(t), "tools", "call", "goTest", `{"args":["./..."]}`, "--project", dir, "--json")
	if r.code != 1 || !strings.Contains(r.stdout, `"isError": true`) || !strings.Contains(r.stdout, "Add(1, 2) is wrong") || !strings.Contains(r.stdout, `"exitCode": 1`) {
		t.Errorf("failing test: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestCallDeniedArgumentsRunNothing(t *testing.T) {
	dir := goModule(t, true)
	for _, arg := range []string{"-exec=x", "--exec=x", "-toolexec=x", "./...\", \"-exec=/bin/x"} {
		r := opair(t, goEnv(t), "tools", "call", "goTest", `{"args":["`+arg+`"]}`, "--project", dir)
		if r.code != 1 {
			t.Errorf("%s: exit %d", arg, r.code)
		}
		if !strings.Contains(r.stderr, "refused before running") || !strings.Contains(r.stderr, `denyArgs prefix "-`) {
			t.Errorf("%s: the refusal does not name the prefix:\n%s", arg, r.stderr)
		}
		if strings.Contains(r.stderr, "$ ") || r.stdout != "" {
			t.Errorf("%s: something ran:\n%s%s", arg, r.stdout, r.stderr)
		}
	}
}

func toolsDirWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		writeTool(t, dir, name, src)
	}
	return dir
}

const printEnvTool = `{
  "schema": {"type": "function", "function": {"name": "printEnv", "description": "Print the environment.", "parameters": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}}},
  "handler": {"type": "exec", "bin": "printenv", "env": {"TOOL_SETTING": "on"}}
}`

func TestCallEnvironmentHasNoSecrets(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"print_env.json": printEnvTool})
	env := []string{"OPAIR_TOOLS_DIR=" + tools, "SOMETHING_API_KEY=sk-secret-1", "GITHUB_TOKEN=ghp-secret-2",
		"DB_PASSWORD=secret-3", "GOFLAGS=-exec=/tmp/x", "NODE_OPTIONS=--require=/tmp/x", "LANG=C.UTF-8"}
	r := opair(t, env, "tools", "call", "printEnv", "{}", "--project", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, leak := range []string{"SOMETHING_API_KEY", "sk-secret-1", "GITHUB_TOKEN", "secret-3", "GOFLAGS=-exec", "NODE_OPTIONS", "OPAIR_TOOLS_DIR"} {
		if strings.Contains(r.stdout, leak) {
			t.Errorf("%s reached the tool:\n%s", leak, r.stdout)
		}
	}
	for _, want := range []string{"LANG=C.UTF-8", "TOOL_SETTING=on", "HOME="} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("%s missing from the tool's environment:\n%s", want, r.stdout)
		}
	}
}

func spawnTool(bin string) string {
	return `{
  "schema": {"type": "function", "function": {"name": "spawn", "description": "Start descendants and sleep.", "parameters": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}}},
  "handler": {"type": "exec", "bin": "` + bin + `"}
}`
}

func readPids(t *testing.T, file string) []int {
	t.Helper()
	var pids []int
	deadline := time.Now().Add(10 * time.Second)
	for len(pids) == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(file)
		if strings.HasSuffix(string(data), "\n") {
			for _, f := range strings.Fields(string(data)) {
				n, _ := strconv.Atoi(f)
				pids = append(pids, n)
			}
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if len(pids) != 3 {
		t.Fatalf("pids: %v", pids)
	}
	return pids
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return !(i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X'))
}

func assertGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d survived the call", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestCallTimeoutKillsEveryDescendant(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"spawn.json": spawnTool(filepath.Join(testBin, "spawner"))})
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"exec": {"timeout": "1s"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pids")
	start := time.Now()
	r := opair(t, []string{"OPAIR_TOOLS_DIR=" + tools, "OPAIR_CONFIG=" + cfg}, "tools", "call", "spawn", `{"args":["`+pidFile+`"]}`, "--project", t.TempDir())
	elapsed := time.Since(start)
	if r.code != 1 || !strings.Contains(r.stdout, "exceeded its timeout of 1s") || !strings.Contains(r.stderr, "timed out after 1s") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// The whole command, start-up included, ends well within a second of
	// the limit.
	if elapsed > 2500*time.Millisecond {
		t.Errorf("took %s for a 1s timeout", elapsed)
	}
	assertGone(t, readPids(t, pidFile))
}

func TestCallInterruptKillsTheCall(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"spawn.json": spawnTool(filepath.Join(testBin, "spawner"))})
	pidFile := filepath.Join(t.TempDir(), "pids")
	home := t.TempDir()
	cmd := exec.Command(opairBin, "tools", "call", "spawn", `{"args":["`+pidFile+`"]}`, "--project", t.TempDir())
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPAIR_TOOLS_DIR=" + tools}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := readPids(t, pidFile)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "spawn cancelled; its processes were killed") {
		t.Errorf("after Ctrl-C: %v\n%s", err, stderr.String())
	}
	assertGone(t, pids)
}

const externalTool = `{
  "schema": {"type": "function", "function": {"name": "catEtc", "description": "Read a file under /etc.", "parameters": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}}},
  "reads": "external",
  "handler": {"type": "exec", "bin": "cat", "allowArgs": ["/etc/hostname"]}
}`

// Without a terminal, ask means deny, and the error shows the rule that
// would allow the call; adding that rule to the config allows it.
func TestCallAskWithoutTerminal(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"cat_etc.json": externalTool})
	cfg := filepath.Join(t.TempDir(), "config.json")
	env := []string{"OPAIR_TOOLS_DIR=" + tools, "OPAIR_CONFIG=" + cfg}
	if err := os.WriteFile(cfg, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := opair(t, env, "tools", "call", "catEtc", `{"args":["/etc/hostname"]}`)
	want := `{"tool": "catEtc", "args": "/etc/hostname", "action": "allow"}`
	if r.code != 1 || !strings.Contains(r.stderr, "there is no terminal to ask on") || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, cfg) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if err := os.WriteFile(cfg, []byte(`{"permissions": [`+want+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = opair(t, env, "tools", "call", "catEtc", `{"args":["/etc/hostname"]}`)
	if r.code != 0 || !strings.Contains(r.stdout, "[exit status 0]") {
		t.Fatalf("with the rule: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// An argument outside allowArgs is refused before any rule is looked at.
	r = opair(t, env, "tools", "call", "catEtc", `{"args":["/etc/shadow"]}`)
	if r.code != 1 || !strings.Contains(r.stderr, `"/etc/shadow"`) || !strings.Contains(r.stderr, "allowArgs") {
		t.Errorf("allowArgs: exit %d\n%s", r.code, r.stderr)
	}
	// An untrusted tool is never allowed by a rule.
	r = opair(t, []string{"OPAIR_CONFIG=" + cfg}, "tools", "call", "npmTest", "{}", "--project", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stderr, "untrusted") || !strings.Contains(r.stderr, "no permission rule can allow it") {
		t.Errorf("untrusted: exit %d\n%s", r.code, r.stderr)
	}
}

// A project's own config may only tighten.
func TestCallProjectRuleTightens(t *testing.T) {
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".opair"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTool(t, filepath.Join(project, ".opair"), "config.json", `{"permissions": [{"tool": "git*", "action": "deny"}]}`)
	r := opair(t, nil, "tools", "call", "gitStatus", "{}", "--project", project)
	if r.code != 1 || !strings.Contains(r.stderr, "gitStatus denied") || !strings.Contains(r.stderr, "project rule") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	writeTool(t, filepath.Join(project, ".opair"), "config.json", `{"permissions": [{"tool": "npmTest", "action": "allow"}]}`)
	r = opair(t, nil, "tools", "call", "gitStatus", "{}", "--project", project)
	if r.code != 1 || !strings.Contains(r.stderr, "allow") || !strings.Contains(r.stderr, ".opair/config.json:1") {
		t.Errorf("a project allow rule must be rejected: exit %d\n%s", r.code, r.stderr)
	}
}

// The example third-party plugin, end to end: its type validates only when
// it is installed, its own config checks are validation errors, and a call
// reaches it.
func TestCallThirdPartyPlugin(t *testing.T) {
	data, err := os.ReadFile("../../examples/opair-plugin-jsonpointer/package_field.json")
	if err != nil {
		t.Fatal(err)
	}
	tools := toolsDirWith(t, map[string]string{"package_field.json": string(data)})
	project := t.TempDir()
	writeTool(t, project, "package.json", `{"name": "app", "version": "1.2.3", "scripts": {"test": "vitest"}}`)
	plugins := filepath.Join(filepath.Dir(opairBin), "plugins")
	env := []string{"OPAIR_TOOLS_DIR=" + tools, "OPAIR_PLUGINS_DIR=" + plugins}

	r := opair(t, env, "tools", "validate")
	if r.code != 0 {
		t.Fatalf("validate with the plugin: exit %d\n%s", r.code, r.stderr)
	}
	r = opair(t, env, "tools", "call", "packageField", `{"pointer":"/scripts/test"}`, "--project", project)
	if r.code != 0 || strings.TrimSpace(r.stdout) != `"vitest"` {
		t.Fatalf("call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = opair(t, env, "tools", "list", "--json")
	if !strings.Contains(r.stdout, `"type": "jsonPointer"`) {
		t.Errorf("list: %s", r.stdout)
	}

	r = opair(t, []string{"OPAIR_TOOLS_DIR=" + tools}, "tools", "validate")
	if r.code != 1 || !strings.Contains(r.stderr, `unknown handler type "jsonPointer"`) {
		t.Errorf("without the plugin: exit %d\n%s", r.code, r.stderr)
	}
	writeTool(t, tools, "package_field.json", strings.Replace(string(data), `"package.json"`, `"../outside.json"`, 1))
	r = opair(t, env, "tools", "validate")
	if r.code != 1 || !strings.Contains(r.stderr, `/config/file: config.file "../outside.json" must be a path inside the project`) {
		t.Errorf("plugin validation: exit %d\n%s", r.code, r.stderr)
	}
}

// If opair itself is killed (SIGKILL: no chance to clean up), its plugins
// notice that their parent is gone, cancel their calls, and every process a
// call started dies with them.
func TestHostKilledLeavesNoProcess(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"spawn.json": spawnTool(filepath.Join(testBin, "spawner"))})
	pidFile := filepath.Join(t.TempDir(), "pids")
	home := t.TempDir()
	cmd := exec.Command(opairBin, "tools", "call", "spawn", `{"args":["`+pidFile+`"]}`, "--project", t.TempDir())
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPAIR_TOOLS_DIR=" + tools}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := readPids(t, pidFile)
	plugin := parentOf(pids[0])
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	assertGoneWithin(t, append(pids, plugin), 5*time.Second)
}

func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+2:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func assertGoneWithin(t *testing.T, pids []int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		if pid == 0 {
			continue
		}
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d survived its host", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// Path-keyed rules are evaluated on the real, resolved path before anything
// runs or asks; a link is classified by its target.
func TestCallPathRulesAndClasses(t *testing.T) {
	project := t.TempDir()
	writeFiles(t, project, map[string]string{"secrets/key.txt": "k\n", "src/a.txt": "a\n", ".env": "TOKEN=x\n"})
	if err := os.Symlink(".env", filepath.Join(project, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secrets/key.txt", filepath.Join(project, "src", "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"permissions": [{"tool": "*", "path": "secrets/**", "action": "deny"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPAIR_CONFIG=" + cfg}
	call := func(path string) result {
		return opair(t, env, "tools", "call", "readProjectFile", `{"path":"`+path+`"}`, "--project", project)
	}
	if r := call("src/a.txt"); r.code != 0 || strings.TrimSpace(r.stdout) != "a" {
		t.Errorf("plain read: %d %s%s", r.code, r.stdout, r.stderr)
	}
	for _, path := range []string{"secrets/key.txt", "src/innocent.txt", "src/../secrets/key.txt"} {
		if r := call(path); r.code != 1 || !strings.Contains(r.stderr, "denied") || !strings.Contains(r.stderr, "secrets/**") || strings.Contains(r.stdout, "k") {
			t.Errorf("%s: exit %d\n%s%s", path, r.code, r.stdout, r.stderr)
		}
	}
	if r := call("notes.txt"); r.code != 1 || !strings.Contains(r.stderr, "project-dot") || strings.Contains(r.stdout, "TOKEN") {
		t.Errorf("a link to .env: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// replaceInProject is decided on every file it would change: one denied
// path denies the call, and nothing is written.
func TestCallReplaceInProjectPathRules(t *testing.T) {
	project := t.TempDir()
	writeFiles(t, project, map[string]string{"secrets/k.txt": "token=old\n", "src/a.txt": "token=old\n"})
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"permissions": [{"tool": "*", "path": "secrets/**", "action": "deny"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := `{"pattern":"old","replacement":"new","literal":true}`
	r := opair(t, []string{"OPAIR_CONFIG=" + cfg}, "tools", "call", "replaceInProject", args, "--mode", "driver", "--project", project)
	if r.code != 1 || !strings.Contains(r.stderr, "denied") || !strings.Contains(r.stderr, "secrets/k.txt") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"secrets/k.txt", "src/a.txt"} {
		if got, _ := os.ReadFile(filepath.Join(project, name)); string(got) != "token=old\n" {
			t.Errorf("%s written: %q", name, got)
		}
	}
	// Without the rule, both change.
	r = opair(t, nil, "tools", "call", "replaceInProject", args, "--mode", "driver", "--project", project)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(project, "secrets/k.txt")); string(got) != "token=new\n" {
		t.Errorf("not replaced: %q", got)
	}
}

// findInProject never reads into a path the rules deny.
func TestCallFindHonoursDenyRules(t *testing.T) {
	project := t.TempDir()
	writeFiles(t, project, map[string]string{"secrets/k.txt": "needle secret\n", "src/a.txt": "needle public\n"})
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"permissions": [{"tool": "*", "path": "secrets/**", "action": "deny"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := opair(t, []string{"OPAIR_CONFIG=" + cfg}, "tools", "call", "findInProject", `{"pattern":"needle"}`, "--project", project)
	if r.code != 0 || !strings.Contains(r.stdout, "src/a.txt:1:needle public") || strings.Contains(r.stdout, "secret") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = opair(t, nil, "tools", "call", "findInProject", `{"pattern":"needle"}`, "--project", project)
	if !strings.Contains(r.stdout, "secrets/k.txt:1:needle secret") {
		t.Errorf("without the rule: %s", r.stdout)
	}
}

// writeFiles writes files (relative name → content) under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
