package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opair-dev/opair/host/permission"
)

const hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// env isolates a test from the real home and config directory.
func env(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv(EnvVar, "")
	return home
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPath(t *testing.T) {
	home := env(t)
	p, err := Path()
	if want := filepath.Join(home, ".config", "opair", "config.json"); err != nil || p != want {
		t.Errorf("Path() = %q, %v; want %q", p, err, want)
	}
	t.Setenv(EnvVar, "/etc/opair.json")
	if p, err := Path(); err != nil || p != "/etc/opair.json" {
		t.Errorf("Path() with %s = %q, %v", EnvVar, p, err)
	}
}

func TestLoadFull(t *testing.T) {
	home := env(t)
	user := write(t, filepath.Join(home, ".config", "opair", "config.json"), `{
  "permissions": [
    {"tool": "goTest", "args": "-run *", "action": "allow"},
    {"tool": "*", "path": "secrets/**", "action": "deny"},
    {"tool": "readFile", "path": "~/notes/**", "action": "allow"}
  ],
  "exec": {"timeout": "10m", "outputCap": 65536},
  "plugins": {"pins": {"opair-plugin-foo": "`+hash+`"}}
}`)
	root := t.TempDir()
	project := write(t, filepath.Join(root, ".opair", "config.json"), `{
  "permissions": [
    {"tool": "bash", "action": "ask"},
    {"tool": "*", "path": "vendor/**", "action": "deny"}
  ],
  "exec": {"timeout": "2m", "outputCap": 65536}
}`)
	p, _ := Path()
	cfg, err := Load(p, root)
	if err != nil {
		t.Fatal(err)
	}
	src := "~/.config/opair/config.json"
	want := &Config{
		Permissions: []permission.Rule{
			{Tool: "goTest", Args: "-run *", Action: permission.Allow, Source: src + ":3"},
			{Tool: "*", Path: "secrets/**", Action: permission.Deny, Source: src + ":4"},
			{Tool: "readFile", Path: filepath.ToSlash(home) + "/notes/**", Action: permission.Allow, Source: src + ":5"},
		},
		ProjectPermissions: []permission.Rule{
			{Tool: "bash", Action: permission.Ask, Source: project + ":3"},
			{Tool: "*", Path: "vendor/**", Action: permission.Deny, Source: project + ":4"},
		},
		Exec:  Exec{Timeout: 2 * time.Minute, OutputCap: 65536},
		Pins:  map[string]string{"opair-plugin-foo": hash},
		Files: []string{user, project},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load =\n%+v\nwant\n%+v", cfg, want)
	}
}

func TestLoadDefaults(t *testing.T) {
	home := env(t)
	p, _ := Path()
	// A missing default file is an empty config.
	cfg, err := Load(p, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Exec: Exec{Timeout: DefaultTimeout, OutputCap: DefaultOutputCap}, Pins: map[string]string{}}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("missing default file: %+v, want %+v", cfg, want)
	}
	// No user file and no project at all.
	if cfg, err := Load("", ""); err != nil || !reflect.DeepEqual(cfg, want) {
		t.Errorf(`Load("", "") = %+v, %v`, cfg, err)
	}
	// A project file alone tightens the defaults.
	root := t.TempDir()
	write(t, filepath.Join(root, ".opair", "config.json"), `{"exec": {"outputCap": 4096}}`)
	cfg, err = Load(p, root)
	if err != nil || cfg.Exec.OutputCap != 4096 || cfg.Exec.Timeout != DefaultTimeout {
		t.Errorf("project tightening the defaults: %+v, %v", cfg, err)
	}
	_ = home
}

func TestLoadMissingNamedFile(t *testing.T) {
	home := env(t)
	named := filepath.Join(home, "nowhere", "opair.json")
	t.Setenv(EnvVar, named)
	p, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(p, "")
	if err == nil || !strings.Contains(err.Error(), named+": config file does not exist") || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("missing OPAIR_CONFIG file: %v", err)
	}
	// Even when OPAIR_CONFIG names the default path.
	def := filepath.Join(home, ".config", "opair", "config.json")
	t.Setenv(EnvVar, def)
	if _, err := Load(def, ""); err == nil {
		t.Error("missing default path named by OPAIR_CONFIG: no error")
	}
	// A path that is not the default, without OPAIR_CONFIG (a --config flag).
	t.Setenv(EnvVar, "")
	if _, err := Load(named, ""); err == nil {
		t.Error("missing explicit path: no error")
	}
}

func TestLoadUnreadable(t *testing.T) {
	home := env(t)
	dir := filepath.Join(home, ".config", "opair", "config.json")
	if err := os.MkdirAll(dir, 0o755); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	_, err := Load(dir, "")
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Msg, "not a regular file") {
		t.Errorf("directory as config: %v", err)
	}
	if os.Getuid() != 0 {
		f := write(t, filepath.Join(home, "secret.json"), `{}`)
		if err := os.Chmod(f, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(f, ""); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("unreadable config: %v", err)
		}
	}
	// A project directory where the project file should be.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".opair", "config.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("", root); err == nil {
		t.Error("project config that is a directory: no error")
	}
}

// TestLoadErrors loads one broken file per case, as the user file or the
// project file, and checks the message at its file:line.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		user    string // the user file; "" for none
		project string // the project file; "" for none
		in      string // "user" or "project": the file the error is in
		line    int
		want    []string // substrings of the error
	}{
		{name: "malformed JSON", user: "{\n  \"permissions\": [\n    {\"tool\": \"x\" \"action\": \"deny\"}\n  ]\n}", in: "user", line: 3,
			want: []string{"expected ',' or '}'"}},
		{name: "truncated", user: `{"permissions": [`, in: "user", line: 1, want: []string{"unexpected end of file"}},
		{name: "empty file", user: ``, in: "user", line: 1, want: []string{"unexpected end of file"}},
		{name: "top-level array", user: `[]`, in: "user", line: 1, want: []string{"holds a array, not an object"}},
		{name: "unknown section with hint", user: "{\n  \"permisions\": []\n}", in: "user", line: 2,
			want: []string{`unknown field "permisions" in the config`, `did you mean "permissions"?`}},
		{name: "unknown rule field with hint", user: "{\"permissions\": [\n  {\"tool\": \"goTest\", \"arg\": \"-v\", \"action\": \"allow\"}\n]}", in: "user", line: 2,
			want: []string{`unknown field "arg" in permissions[0]`, `did you mean "args"?`}},
		{name: "unknown exec field with hint", user: "{\n\"exec\": {\n\"timeOut\": \"1m\", \"outputcaps\": 2048}}", in: "user", line: 3,
			want: []string{`key "timeOut" in exec differs from the field "timeout" only by case`, `unknown field "outputcaps" in exec`, `did you mean "outputCap"?`}},
		{name: "unknown plugins field", user: `{"plugins": {"pin": {}}}`, in: "user", line: 1, want: []string{`unknown field "pin" in plugins`, `did you mean "pins"?`}},
		{name: "schema key", user: `{"$schema": "x"}`, in: "user", line: 1, want: []string{`unknown field "$schema"`, "point your editor"}},
		{name: "case variant section", user: "{\n\n\"Permissions\": []}", in: "user", line: 3,
			want: []string{`key "Permissions" in the config differs from the field "permissions" only by case`}},
		{name: "duplicate key", user: "{\"permissions\": [\n {\"tool\": \"goTest\",\n  \"action\": \"deny\",\n  \"action\": \"allow\"}]}", in: "user", line: 4,
			want: []string{`duplicate key "action"`, "first at line 3"}},
		{name: "duplicate section", user: "{\"permissions\": [{\"tool\": \"*\", \"action\": \"deny\"}],\n\"permissions\": []}", in: "user", line: 2,
			want: []string{`duplicate key "permissions" at the top level`}},
		{name: "bad action", user: "{\"permissions\": [\n{\"tool\": \"goTest\", \"action\": \"Allow\"}]}", in: "user", line: 2,
			want: []string{`permissions[0].action "Allow" is not one of allow, ask, deny`, `write it in lower case: "allow"`}},
		{name: "not offered is not an action", user: `{"permissions": [{"tool": "goTest", "action": "not offered"}]}`, in: "user", line: 1,
			want: []string{`"not offered" is not one of allow, ask, deny`}},
		{name: "missing action", user: "{\"permissions\": [\n{\"tool\": \"goTest\"}]}", in: "user", line: 2, want: []string{`permissions[0] is missing "action"`}},
		{name: "missing tool", user: "{\"permissions\": [\n{\"action\": \"deny\"}]}", in: "user", line: 2, want: []string{`permissions[0] is missing "tool"`}},
		{name: "empty tool", user: `{"permissions": [{"tool": "", "action": "deny"}]}`, in: "user", line: 1, want: []string{`permissions[0].tool is empty`}},
		{name: "tool with space", user: `{"permissions": [{"tool": "go test", "action": "deny"}]}`, in: "user", line: 1, want: []string{`white space`}},
		{name: "tool not a string", user: `{"permissions": [{"tool": 3, "action": "deny"}]}`, in: "user", line: 1, want: []string{`permissions[0].tool must be a string, not a number`}},
		{name: "empty args", user: `{"permissions": [{"tool": "x", "args": "", "action": "deny"}]}`, in: "user", line: 1, want: []string{`permissions[0].args is empty`}},
		{name: "args with newline", user: `{"permissions": [{"tool": "x", "args": "a\nb", "action": "deny"}]}`, in: "user", line: 1, want: []string{`NUL or newline`}},
		{name: "args and path", user: "{\"permissions\": [\n{\"tool\": \"goTest\", \"args\": \"-v\",\n \"path\": \"src/**\", \"action\": \"allow\"}]}", in: "user", line: 3,
			want: []string{`permissions[0] has both "args" and "path"`, "write two rules"}},
		{name: "second rule named", user: "{\"permissions\": [\n{\"tool\": \"a\", \"action\": \"deny\"},\n{\"tool\": \"b\", \"action\": \"nope\"}]}", in: "user", line: 3,
			want: []string{`permissions[1].action "nope"`}},
		{name: "bad glob", user: `{"permissions": [{"tool": "*", "path": "src/[a", "action": "deny"}]}`, in: "user", line: 1, want: []string{`"src/[a" is not a valid glob`}},
		{name: "path with ..", user: `{"permissions": [{"tool": "*", "path": "src/../x", "action": "deny"}]}`, in: "user", line: 1, want: []string{`would never match`}},
		{name: "path with ./", user: `{"permissions": [{"tool": "*", "path": "./x", "action": "deny"}]}`, in: "user", line: 1, want: []string{`would never match`}},
		{name: "path with trailing slash", user: `{"permissions": [{"tool": "*", "path": "x/", "action": "deny"}]}`, in: "user", line: 1, want: []string{`would never match`}},
		{name: "path with $HOME", user: `{"permissions": [{"tool": "*", "path": "$HOME/.ssh/**", "action": "deny"}]}`, in: "user", line: 1, want: []string{`starts with a variable`, "write ~/"}},
		{name: "path with ~user", user: `{"permissions": [{"tool": "*", "path": "~root/x", "action": "deny"}]}`, in: "user", line: 1, want: []string{`another user's home`}},
		{name: "permissions not an array", user: `{"permissions": {}}`, in: "user", line: 1, want: []string{`permissions must be an array, not a object`}},
		{name: "rule not an object", user: `{"permissions": ["x"]}`, in: "user", line: 1, want: []string{`permissions[0] must be an object, not a string`}},
		{name: "bad duration", user: "{\"exec\": {\n\"timeout\": \"10 minutes\"}}", in: "user", line: 2, want: []string{`exec.timeout "10 minutes" is not a duration`, `"10m"`}},
		{name: "zero duration", user: `{"exec": {"timeout": "0s"}}`, in: "user", line: 1, want: []string{`exec.timeout "0s" is not positive`}},
		{name: "negative duration", user: `{"exec": {"timeout": "-1m"}}`, in: "user", line: 1, want: []string{`is not positive`}},
		{name: "duration over 24h", user: `{"exec": {"timeout": "25h"}}`, in: "user", line: 1, want: []string{`over the limit of 24h`}},
		{name: "duration as number", user: `{"exec": {"timeout": 600}}`, in: "user", line: 1, want: []string{`exec.timeout must be a string, not a number`}},
		{name: "output cap too small", user: `{"exec": {"outputCap": 1023}}`, in: "user", line: 1, want: []string{`exec.outputCap 1023 is out of range`}},
		{name: "output cap too large", user: `{"exec": {"outputCap": 67108865}}`, in: "user", line: 1, want: []string{`out of range`}},
		{name: "output cap fraction", user: `{"exec": {"outputCap": 65536.0}}`, in: "user", line: 1, want: []string{`exec.outputCap 65536.0 is not an integer`}},
		{name: "exec not an object", user: `{"exec": "10m"}`, in: "user", line: 1, want: []string{`exec must be an object, not a string`}},
		{name: "bad pin name", user: "{\"plugins\": {\"pins\": {\n\"foo\": \"" + hash + "\"}}}", in: "user", line: 2, want: []string{`"foo" is not a plugin name`}},
		{name: "bad pin upper case", user: `{"plugins": {"pins": {"opair-plugin-foo": "` + strings.ToUpper(hash) + `"}}}`, in: "user", line: 1, want: []string{`is not in lower case`, "write it in lower case: " + hash}},
		{name: "bad pin length", user: `{"plugins": {"pins": {"opair-plugin-foo": "abc"}}}`, in: "user", line: 1, want: []string{`is not a sha256 (3 characters)`}},
		{name: "NUL in a string", user: `{"permissions": [{"tool": "a\u0000", "action": "deny"}]}`, in: "user", line: 1, want: []string{`NUL character`}},

		// The project file.
		{name: "project allow rule", project: "{\"permissions\": [\n{\"tool\": \"*\", \"path\": \"x/**\", \"action\": \"deny\"},\n{\"tool\": \"goTest\", \"args\": \"-run *\", \"action\": \"allow\"}]}", in: "project", line: 3,
			want: []string{`permissions[1] {tool: "goTest", args: "-run *"} allows; a project config may not allow`, "must not be able to grant itself permissions"}},
		{name: "project plugins section", project: "{\n\"plugins\": {}}", in: "project", line: 2,
			want: []string{`section "plugins" is not allowed in a project config`, "may contain only: permissions, exec"}},
		{name: "project unknown section", project: `{"model": "x"}`, in: "project", line: 1,
			want: []string{`unknown field "model" in the project config`, "valid sections are: permissions, exec"}},
		{name: "project timeout looser than default", project: "{\"exec\": {\n\"timeout\": \"11m\"}}", in: "project", line: 2,
			want: []string{`exec.timeout 11m0s is longer than the default 10m0s`}},
		{name: "project timeout looser than user", user: `{"exec": {"timeout": "1m"}}`, project: "{\"exec\": {\"timeout\": \"2m\"}}", in: "project", line: 1,
			want: []string{`exec.timeout 2m0s is longer than the user config's 1m0s`}},
		{name: "project output cap larger", user: `{"exec": {"outputCap": 2048}}`, project: "{\"exec\":\n{\"outputCap\": 4096}}", in: "project", line: 2,
			want: []string{`exec.outputCap 4096 is larger than the user config's 2048`}},
		{name: "project malformed", project: `{"permissions": [}`, in: "project", line: 1, want: []string{"unexpected '}'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := env(t)
			userPath := filepath.Join(home, ".config", "opair", "config.json")
			if tt.user != "" || tt.name == "empty file" {
				write(t, userPath, tt.user)
			}
			root := t.TempDir()
			projectPath := filepath.Join(root, ".opair", "config.json")
			if tt.project != "" {
				write(t, projectPath, tt.project)
			}
			cfg, err := Load(userPath, root)
			if err == nil {
				t.Fatalf("no error; got %+v", cfg)
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is a %T, not Errors: %v", err, err)
			}
			file := userPath
			if tt.in == "project" {
				file = projectPath
			}
			msg := err.Error()
			if at := fmt.Sprintf("%s:%d:", file, tt.line); !strings.Contains(msg, at) {
				t.Errorf("error does not point at %s:\n%s", at, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not contain %q:\n%s", w, msg)
				}
			}
			for _, d := range errs {
				if d.Hint == "" {
					t.Errorf("no hint for %s", d)
				}
			}
		})
	}
}

// TestLoadEveryErrorAtOnce checks that the problems of both files come back
// together.
func TestLoadEveryErrorAtOnce(t *testing.T) {
	home := env(t)
	user := write(t, filepath.Join(home, "u.json"), "{\"permissions\": [\n{\"tool\": \"a\", \"action\": \"maybe\"},\n{\"tool\": \"\", \"action\": \"deny\"}],\n\"exec\": {\"timeout\": \"forever\"}}")
	root := t.TempDir()
	write(t, filepath.Join(root, ".opair", "config.json"), "{\"permissions\": [{\"tool\": \"a\", \"action\": \"allow\"}],\n\"plugins\": {}}")
	_, err := Load(user, root)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("%v", err)
	}
	var got []string
	for _, d := range errs {
		got = append(got, fmt.Sprintf("%s:%d", filepath.Base(filepath.Dir(d.File))+"/"+filepath.Base(d.File), d.Line))
	}
	dir := filepath.Base(home)
	want := []string{dir + "/u.json:2", dir + "/u.json:3", dir + "/u.json:4", ".opair/config.json:1", ".opair/config.json:2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics at %v, want %v\n%v", got, want, err)
	}
}

// TestTestdata loads the corpus shared with the schema's test: every valid
// file loads, and every file the schema rejects, the loader rejects too.
func TestTestdata(t *testing.T) {
	env(t)
	for _, tc := range []struct {
		dir   string
		valid bool
	}{{"valid", true}, {"invalid-schema", false}} {
		files, err := filepath.Glob(filepath.Join("testdata", tc.dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("testdata/%s: %v, %d files", tc.dir, err, len(files))
		}
		for _, f := range files {
			_, err := Load(f, "")
			if tc.valid && err != nil {
				t.Errorf("%s: %v", f, err)
			}
			if !tc.valid {
				if err == nil {
					t.Errorf("%s: loaded, but should be rejected", f)
				} else if !strings.Contains(err.Error(), f+":") {
					t.Errorf("%s: error does not name the file: %v", f, err)
				}
			}
		}
	}
}

// TestProjectStyleFileAsProject checks that the valid project-style file is
// accepted as a project config.
func TestProjectStyleFileAsProject(t *testing.T) {
	env(t)
	data, err := os.ReadFile("testdata/valid/project_style.json")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write(t, filepath.Join(root, ".opair", "config.json"), string(data))
	user := write(t, filepath.Join(t.TempDir(), "c.json"), `{"exec": {"timeout": "2h"}}`)
	cfg, err := Load(user, root)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Exec.Timeout != 90*time.Minute || len(cfg.ProjectPermissions) != 2 || len(cfg.Permissions) != 0 {
		t.Errorf("got %+v", cfg)
	}
}

// TestDecideWithLoadedRules runs a loaded config through permission.Decide.
func TestDecideWithLoadedRules(t *testing.T) {
	home := env(t)
	user := write(t, filepath.Join(home, ".config", "opair", "config.json"), `{"permissions": [
  {"tool": "readFile", "path": "~/notes/**", "action": "allow"},
  {"tool": "goTest", "args": "-run *", "action": "allow"}
]}`)
	root := t.TempDir()
	write(t, filepath.Join(root, ".opair", "config.json"), `{"permissions": [{"tool": "goTest", "args": "-run Danger*", "action": "deny"}]}`)
	cfg, err := Load(user, root)
	if err != nil {
		t.Fatal(err)
	}
	ask := permission.Decision{Action: permission.Ask, Reason: "reads outside the project"}
	d := permission.Decide(permission.Call{Tool: "readFile", Paths: []string{filepath.Join(home, "notes", "a", "b.md")}, Static: ask}, cfg.Permissions, cfg.ProjectPermissions)
	if d.Action != permission.Allow || !strings.Contains(d.Reason, "rule 1 of ~/.config/opair/config.json:2") {
		t.Errorf("~ expanded rule: %s (%s)", d.Action, d.Reason)
	}
	d = permission.Decide(permission.Call{Tool: "goTest", Args: []string{"-run", "DangerZone"}, Static: ask}, cfg.Permissions, cfg.ProjectPermissions)
	if d.Action != permission.Deny || !strings.Contains(d.Reason, "project rule 1 of "+filepath.Join(root, ".opair", "config.json")+":1") {
		t.Errorf("project deny: %s (%s)", d.Action, d.Reason)
	}
}
