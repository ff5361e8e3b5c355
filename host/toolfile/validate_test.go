package toolfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tool builds a tool file: name, the handler block (or "" for none) and
// extra top-level members (each with a trailing comma).
func tool(name, handler, extra string) string {
	return tool2(name, `{"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}`, handler, extra)
}

func tool2(name, params, handler, extra string) string {
	h := ""
	if handler != "" {
		h = ",\n  \"handler\": " + handler
	}
	return fmt.Sprintf(`{
  %s"schema": {
    "type": "function",
    "function": {
      "name": %q,
      "description": "A tool.",
      "parameters": %s
    }
  }%s
}
`, extra, name, params, h)
}

const pathParams = `{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}`

func TestParseValid(t *testing.T) {
	cases := []struct {
		file, src string
		check     func(t *testing.T, tl *Tool)
	}{
		{"go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "subcommand": "test  -v", "denyArgs": ["-exec"]}`, `"writes": "artifacts",`),
			func(t *testing.T, tl *Tool) {
				if tl.Kind != KindExec || tl.Reads != Project || tl.Writes != Artifacts {
					t.Errorf("kind %s reads %s writes %s", tl.Kind, tl.Reads, tl.Writes)
				}
				if got := strings.Join(tl.Command(), " "); got != "go test -v" {
					t.Errorf("command %q", got)
				}
				if tl.Untrusted {
					t.Error("go is not untrusted")
				}
			}},
		{"npm_test.json", tool("npmTest", `{"type": "exec", "bin": "npm", "subcommand": "test"}`, `"exec": "untrusted",`),
			func(t *testing.T, tl *Tool) {
				if !tl.Untrusted {
					t.Error("not untrusted")
				}
			}},
		{"run_script.json", tool("runScript", `{"type": "exec", "bin": "/bin/bash"}`, ``),
			func(t *testing.T, tl *Tool) {
				if !tl.Untrusted || !strings.Contains(tl.UntrustedReason, "shell") {
					t.Errorf("bash must be untrusted, got %v %q", tl.Untrusted, tl.UntrustedReason)
				}
			}},
		{"read_file.json", tool2("readFile", pathParams, `{"type": "readFile", "scope": "project-dot"}`, `"reads": "project-dot", "writes": "none",`),
			func(t *testing.T, tl *Tool) {
				if tl.Reads != ProjectDot || tl.Writes != None || tl.Handler.Scope != ScopeProjectDot {
					t.Errorf("reads %s writes %s", tl.Reads, tl.Writes)
				}
			}},
		{"ask_question.json", tool2("askQuestion", `{"type": "object", "properties": {"question": {"type": "string"}}}`, "", `"reads": "none", "slashCommand": "ask",`),
			func(t *testing.T, tl *Tool) {
				if tl.Kind != KindHandlerless || tl.Server != "host" || tl.Reads != None || tl.SlashCommand != "ask" {
					t.Errorf("%+v", tl)
				}
			}},
		{"git_http_fetch.json", tool("gitHTTPFetch", `{"type": "exec", "bin": "git", "subcommand": "fetch", "summary": "lineCount:ref", "env": {"LANG": "C"}}`, `"internal": true,`),
			func(t *testing.T, tl *Tool) {
				if !tl.Internal || tl.Handler.Summary != "lineCount:ref" || tl.Handler.Env["LANG"] != "C" {
					t.Errorf("%+v", tl)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			tl, errs := Parse(tc.file, []byte(tc.src), FirstParty())
			if errs != nil {
				t.Fatalf("unexpected errors:\n%v", errs)
			}
			if string(tl.Schema) == "" || !strings.HasPrefix(string(tl.Schema), "{") {
				t.Errorf("schema not kept: %q", tl.Schema)
			}
			tc.check(t, tl)
		})
	}
}

// TestParseRules breaks each rule of SPEC §2.1 and §7.1 once. want is a
// substring of the message, line the line it must be reported on.
func TestParseRules(t *testing.T) {
	exec := `{"type": "exec", "bin": "go"}`
	cases := []struct {
		name, file, src, want string
		line                  int
	}{
		// Strict decoding (§7.1).
		{"case-folded key", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "denyArgs": ["-exec"], "DENYARGS": []}`, ""), `key "DENYARGS" in handler differs from the field "denyArgs" only by case`, 10},
		{"duplicate key", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "denyArgs": ["-exec"], "denyArgs": []}`, ""), `duplicate key "denyArgs" in "handler" (first at line 10`, 10},
		{"duplicate top-level key", "go_test.json", tool("goTest", exec, `"writes": "none", "writes": "artifacts",`), `duplicate key "writes" at the top level`, 2},
		{"invalid utf-8", "go_test.json", strings.Replace(tool("goTest", exec, ""), "A tool.", "A \xff tool.", 1), "invalid UTF-8", 6},
		{"NUL escape", "go_test.json", strings.Replace(tool("goTest", exec, ""), "A tool.", `A \u0000 tool.`, 1), "NUL character", 6},
		{"raw NUL byte", "go_test.json", strings.Replace(tool("goTest", exec, ""), "A tool.", "A \x00 tool.", 1), "NUL character", 6},
		{"syntax error", "go_test.json", strings.Replace(tool("goTest", exec, ""), `"type": "function",`, `"type": "function"`, 1), `expected ',' or '}'`, 4},
		{"trailing comma", "go_test.json", "{\n  \"schema\": {},\n}\n", "expected a key", 3},
		{"too deep", "go_test.json", strings.Replace(tool("goTest", exec, ""), `"items": {"type": "string"}`, `"items": `+strings.Repeat(`{"not":`, 70)+`{}`+strings.Repeat(`}`, 70), 1), "nesting deeper than 64", 7},
		{"too big", "go_test.json", strings.Replace(tool("goTest", exec, ""), "A tool.", strings.Repeat("x", MaxFileBytes), 1), "over the limit", 1},
		{"not an object", "go_test.json", `["schema"]`, "not an object", 1},
		{"unknown top-level field", "go_test.json", tool("goTest", exec, `"writez": "none",`), `unknown field "writez" in the tool`, 2},
		{"unknown handler field", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "denyArg": []}`, ""), `unknown field "denyArg" in handler`, 10},
		{"unknown schema field", "go_test.json", strings.Replace(tool("goTest", exec, ""), `"type": "function",`, `"type": "function", "strict": true,`, 1), `unknown field "strict" in schema`, 3},
		{"unknown function field", "go_test.json", strings.Replace(tool("goTest", exec, ""), `"description"`, `"descripton": "x", "description"`, 1), `unknown field "descripton" in schema.function`, 6},
		// Rule 1.
		{"schema missing", "go_test.json", `{"handler": {"type": "exec", "bin": "go"}}`, `missing required field "schema"`, 1},
		{"schema type", "go_test.json", strings.Replace(tool("goTest", exec, ""), `"type": "function"`, `"type": "tool"`, 1), `schema.type must be "function"`, 3},
		{"bad name", "Go_test.json", tool("GoTest", exec, ""), `does not match ^[a-z][a-zA-Z0-9]*$`, 5},
		{"empty description", "go_test.json", strings.Replace(tool("goTest", exec, ""), "A tool.", "  ", 1), "description is empty", 6},
		{"parameters not object type", "go_test.json", tool2("goTest", `{"type": "array"}`, exec, ""), `top-level "type": "object"`, 7},
		{"parameters invalid schema", "go_test.json", tool2("goTest", "{\"type\": \"object\",\n \"properties\": {\"args\": {\"type\": \"arrray\"}}}", exec, ""), "parameters/properties/args/type is not a valid JSON Schema: value must be one of", 8},
		{"parameters remote ref", "go_test.json", tool2("goTest", `{"type": "object", "properties": {"args": {"$ref": "https://example.com/x.json"}}}`, exec, ""), "not a valid JSON Schema", 7},
		{"strict not bool", "go_test.json", strings.Replace(tool("goTest", exec, ""), `"description"`, `"strict": "yes", "description"`, 1), "strict must be a boolean", 6},
		// Rule 2.
		{"file name", "gotest.json", tool("goTest", exec, ""), "file name gotest.json does not match the tool name \"goTest\", which lives in go_test.json", 5},
		// Rule 3.
		{"unknown handler type", "go_test.json", tool("goTest", `{"type": "readFiles", "scope": "project"}`, ""), `unknown handler type "readFiles"`, 10},
		{"handler-less unknown", "go_test.json", tool("goTest", "", ""), `nothing serves a handler-less tool`, 1},
		{"handler type missing", "go_test.json", tool("goTest", `{"bin": "go"}`, ""), `handler is missing "type"`, 10},
		// Rule 4.
		{"exec bin missing", "go_test.json", tool("goTest", `{"type": "exec"}`, ""), `missing "bin"`, 10},
		{"exec bin relative", "go_test.json", tool("goTest", `{"type": "exec", "bin": "./go"}`, ""), `relative path`, 10},
		{"exec bin newline", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go\n"}`, ""), `NUL or newline`, 10},
		{"exec subcommand newline", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "subcommand": "test\nx"}`, ""), `subcommand contains a NUL or newline`, 10},
		{"exec scope", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "scope": "project"}`, ""), `handler.scope is not allowed for exec handlers`, 10},
		{"exec config", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "config": {}}`, ""), `handler.config is not allowed for exec`, 10},
		{"exec params", "go_test.json", tool2("goTest", pathParams, exec, ""), `may declare only the parameter "args", not "path"`, 7},
		{"exec args type", "go_test.json", tool2("goTest", `{"type": "object", "properties": {"args": {"type": "string"}}}`, exec, ""), `must be an array of strings`, 7},
		// Rule 5.
		{"builtin bin", "read_file.json", tool2("readFile", pathParams, `{"type": "readFile", "scope": "project", "bin": "cat"}`, ""), `handler.bin is not allowed for builtin handler "readFile"`, 10},
		{"builtin denyArgs", "read_file.json", tool2("readFile", pathParams, `{"type": "readFile", "scope": "project", "denyArgs": ["-x"]}`, ""), `handler.denyArgs is not allowed`, 10},
		{"builtin summary", "read_file.json", tool2("readFile", pathParams, `{"type": "readFile", "scope": "project", "summary": "grep"}`, ""), `handler.summary is not allowed`, 10},
		{"builtin scope missing", "read_file.json", tool2("readFile", pathParams, `{"type": "readFile"}`, ""), `requires "scope"`, 10},
		{"builtin scope wrong", "replace.json", tool2("replace", `{"type": "object", "properties": {"pattern": {"type": "string"}, "replacement": {"type": "string"}}, "required": ["pattern", "replacement"]}`, `{"type": "replaceInProject", "scope": "project-dot"}`, ""), `scope "project-dot" is not allowed for "replaceInProject"`, 10},
		{"write external", "write_out.json", tool2("writeOut", `{"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}`, `{"type": "createFile", "scope": "external"}`, ""), `scope "external" is not allowed for "createFile"`, 10},
		{"find with scope", "find.json", tool2("find", `{"type": "object"}`, `{"type": "findInProject", "scope": "project"}`, ""), `handler.scope is not allowed for "findInProject"`, 10},
		{"includeHidden elsewhere", "read_file.json", tool2("readFile", pathParams, `{"type": "readFile", "scope": "project", "includeHidden": true}`, ""), `handler.includeHidden is not allowed for "readFile"`, 10},
		{"builtin unknown param", "read_file.json", tool2("readFile", `{"type": "object", "properties": {"path": {"type": "string"}, "file": {"type": "string"}}, "required": ["path"]}`, `{"type": "readFile", "scope": "project"}`, ""), `parameter "file" is not one the readFile handler understands`, 7},
		{"builtin param type", "read_file.json", tool2("readFile", `{"type": "object", "properties": {"path": {"type": "integer"}}, "required": ["path"]}`, `{"type": "readFile", "scope": "project"}`, ""), `parameter "path" of readFile must have type "string"`, 7},
		{"builtin param missing", "read_file.json", tool2("readFile", `{"type": "object"}`, `{"type": "readFile", "scope": "project"}`, ""), `needs the parameter "path"`, 7},
		{"builtin param not required", "read_file.json", tool2("readFile", `{"type": "object", "properties": {"path": {"type": "string"}}}`, `{"type": "readFile", "scope": "project"}`, ""), `list it in required`, 7},
		// Rule 6.
		{"unknown category", "go_test.json", tool("goTest", exec, `"writes": "everything",`), `unknown write category "everything"`, 2},
		{"artifacts is not a read category", "go_test.json", tool("goTest", exec, `"reads": "artifacts",`), `unknown read category "artifacts"`, 2},
		{"derived reads disagree", "read_file.json", tool2("readFile", pathParams, `{"type": "readFile", "scope": "external"}`, `"reads": "project",`), `declared reads "project" disagrees with "external"`, 2},
		{"derived writes disagree", "edit.json", tool2("edit", `{"type": "object", "properties": {"path": {"type": "string"}, "oldString": {"type": "string"}, "newString": {"type": "string"}}, "required": ["path", "oldString", "newString"]}`, `{"type": "editFile", "scope": "project"}`, `"writes": "none",`), `declared writes "none" disagrees with "project"`, 2},
		// Rule 7.
		{"exec value", "go_test.json", tool("goTest", exec, `"exec": "trusted",`), `exec must be "untrusted"`, 2},
		{"exec on builtin", "read_file.json", tool2("readFile", pathParams, `{"type": "readFile", "scope": "project"}`, `"exec": "untrusted",`), `only allowed on exec tools`, 2},
		// Rule 8.
		{"slash shape", "go_test.json", tool("goTest", exec, `"slashCommand": "/test",`), `slashCommand "/test" does not match`, 2},
		{"slash upper", "go_test.json", tool("goTest", exec, `"slashCommand": "goTest",`), `does not match`, 2},
		// Rule 9.
		{"requiresBin with bin", "go_test.json", tool("goTest", exec, `"requiresBin": "go",`), `requiresBin is only allowed on tools without a handler.bin`, 2},
		{"requiresBin shape", "plan.json", tool2("plan", `{"type": "object"}`, "", `"requiresBin": "../git",`), `requiresBin "../git" is a relative path`, 2},
		// Rule 10.
		{"summary value", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "summary": "gitdiff"}`, ""), `unknown summary "gitdiff"`, 10},
		{"summary noun", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "summary": "lineCount:"}`, ""), `unknown summary "lineCount:"`, 10},
		// §7.1 argument lists and env.
		{"denyArgs empty entry", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "denyArgs": [""]}`, ""), `handler.denyArgs[0] is ""`, 10},
		{"allowArgs dash", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "allowArgs": ["-v", "-"]}`, ""), `handler.allowArgs[1] is "-"`, 10},
		{"denyArgs newline", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "denyArgs": ["-a\nb"]}`, ""), `contains a NUL or newline`, 10},
		{"env LD_PRELOAD", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "env": {"LD_PRELOAD": "/tmp/x.so"}}`, ""), `handler.env may not set "LD_PRELOAD"`, 10},
		{"env PATH", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "env": {"PATH": "/tmp"}}`, ""), `may not set "PATH"`, 10},
		{"env GOFLAGS", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "env": {"GOFLAGS": "-exec=x"}}`, ""), `may not set "GOFLAGS"`, 10},
		{"env GIT_", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "env": {"GIT_CONFIG_COUNT": "1"}}`, ""), `may not set "GIT_CONFIG_COUNT"`, 10},
		{"env lower-case npm config", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "env": {"npm_config_script_shell": "/bin/x"}}`, ""), `may not set "npm_config_script_shell"`, 10},
		{"env secret", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "env": {"GITHUB_TOKEN": "x"}}`, ""), `looks like a secret`, 10},
		{"env value type", "go_test.json", tool("goTest", `{"type": "exec", "bin": "go", "env": {"LANG": 1}}`, ""), `handler.env.LANG must be a string`, 10},
		{"internal type", "go_test.json", tool("goTest", exec, `"internal": "yes",`), `internal must be a boolean`, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl, errs := Parse(tc.file, []byte(tc.src), FirstParty())
			if tl != nil || len(errs) == 0 {
				t.Fatalf("accepted; want an error containing %q", tc.want)
			}
			for _, d := range errs {
				if strings.Contains(d.Msg, tc.want) {
					if d.Line != tc.line {
						t.Errorf("reported on line %d, want %d: %s", d.Line, tc.line, d)
					}
					if d.Hint == "" {
						t.Errorf("no hint: %s", d)
					}
					if d.File != tc.file || d.Col < 1 {
						t.Errorf("bad position: %s", d)
					}
					return
				}
			}
			t.Errorf("no error contains %q; got:\n%v", tc.want, errs)
		})
	}
}

func TestUnknownFieldNamesNearest(t *testing.T) {
	_, errs := Parse("go_test.json", []byte(tool("goTest", `{"type": "exec", "bin": "go", "denyargz": []}`, "")), FirstParty())
	if len(errs) != 1 || !strings.Contains(errs[0].Hint, `did you mean "denyArgs"?`) {
		t.Fatalf("want a hint naming denyArgs, got %v", errs)
	}
}

func TestEveryErrorOfAFileAtOnce(t *testing.T) {
	src := tool("goTest", `{"type": "exec", "bin": "go", "denyArgs": ["-exec"], "DENYARGS": [], "env": {"LD_PRELOAD": "x"}, "summary": "nope"}`, `"writes": "lots", "exec": "sure", "slashCommand": "Go",`)
	_, errs := Parse("go_test.json", []byte(src), FirstParty())
	for _, want := range []string{`"DENYARGS"`, `"LD_PRELOAD"`, `unknown summary "nope"`, `unknown write category "lots"`, `exec must be "untrusted"`, `slashCommand "Go"`} {
		found := false
		for _, d := range errs {
			found = found || strings.Contains(d.Msg, want)
		}
		if !found {
			t.Errorf("missing error %s in:\n%v", want, errs)
		}
	}
	for i := 1; i < len(errs); i++ {
		if errs[i].Line < errs[i-1].Line {
			t.Errorf("diagnostics not in line order: %v", errs)
		}
	}
}

func TestSnakeCase(t *testing.T) {
	cases := map[string]string{
		"readProjectFile":  "read_project_file",
		"gitHTTPFetch":     "git_http_fetch",
		"goTest":           "go_test",
		"gofmt":            "gofmt",
		"a":                "a",
		"readFile2":        "read_file2",
		"sha256Sum":        "sha256_sum",
		"base64Encode":     "base64_encode",
		"parseURL":         "parse_url",
		"parseURLs":        "parse_ur_ls",
		"getHTTPSURL":      "get_httpsurl",
		"getHTTPSUrl":      "get_https_url",
		"x11Forward":       "x11_forward",
		"ioReadAll":        "io_read_all",
		"runGoVet":         "run_go_vet",
		"utf8ToUTF16Bytes": "utf8_to_utf16_bytes",
		"aB":               "a_b",
		"aBC":              "a_bc",
		"aBCd":             "a_b_cd",
	}
	for in, want := range cases {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDerivedCategories covers every builtin type × allowed scope.
func TestDerivedCategories(t *testing.T) {
	readers := map[string]bool{"listDirectory": true, "readFile": true, "readFileLines": true, "readFileBytes": true}
	scopeCat := map[Scope]Category{ScopeProject: Project, ScopeProjectDot: ProjectDot, ScopeProjectIgnore: ProjectIgnore, ScopeExternal: External}
	n := 0
	for _, typ := range BuiltinTypes() {
		bt := builtinTypes[typ]
		for _, s := range bt.scopes {
			r, w := DeriveCategories(typ, s, false, false)
			wantW := scopeCat[s]
			if readers[typ] {
				wantW = None
			}
			if r != scopeCat[s] || w != wantW {
				t.Errorf("%s/%s: reads %s writes %s, want %s %s", typ, s, r, w, scopeCat[s], wantW)
			}
			n++
		}
	}
	find := []struct {
		hidden, ignored bool
		want            Category
	}{{false, false, Project}, {false, true, ProjectIgnore}, {true, false, ProjectDot}, {true, true, ProjectDot}}
	for _, f := range find {
		r, w := DeriveCategories("findInProject", "", f.hidden, f.ignored)
		if r != f.want || w != None {
			t.Errorf("findInProject hidden=%v ignored=%v: %s %s", f.hidden, f.ignored, r, w)
		}
		n++
	}
	if n != 2+4*3+3*4+1+4 { // listDirectory 2, three readers × 4, four writers × 3, replace 1, find 4
		t.Errorf("covered %d combinations", n)
	}
	// Every builtin type × every scope, allowed or not, through the validator.
	for _, typ := range BuiltinTypes() {
		bt := builtinTypes[typ]
		if len(bt.scopes) == 0 {
			continue
		}
		for _, s := range allScopes {
			var props, req []string
			for _, p := range bt.params {
				props = append(props, fmt.Sprintf("%q: {\"type\": %q}", p.name, p.jsonType))
				if p.required {
					req = append(req, fmt.Sprintf("%q", p.name))
				}
			}
			params := fmt.Sprintf(`{"type": "object", "properties": {%s}, "required": [%s]}`, strings.Join(props, ", "), strings.Join(req, ", "))
			src := tool2("x", params, fmt.Sprintf(`{"type": %q, "scope": %q}`, typ, s), "")
			tl, errs := Parse("x.json", []byte(src), FirstParty())
			allowed := false
			for _, a := range bt.scopes {
				allowed = allowed || a == s
			}
			if allowed != (errs == nil) {
				t.Errorf("%s with scope %s: allowed=%v but errors: %v", typ, s, allowed, errs)
			}
			if tl != nil {
				r, w := DeriveCategories(typ, s, false, false)
				if tl.Reads != r || tl.Writes != w {
					t.Errorf("%s/%s: tool has %s/%s, derived %s/%s", typ, s, tl.Reads, tl.Writes, r, w)
				}
			}
		}
	}
}

func TestPluginHandlerType(t *testing.T) {
	cat := Static{Types: map[string]string{"httpGet": "opair-plugin-http"}, Handlerless: map[string]string{}}
	src := tool2("fetch", `{"type": "object"}`, `{"type": "httpGet", "config": {"timeout": 3}}`, `"reads": "external",`)
	tl, errs := Parse("fetch.json", []byte(src), cat)
	if errs != nil {
		t.Fatal(errs)
	}
	if tl.Kind != KindPlugin || tl.Server != "opair-plugin-http" || string(tl.Handler.Config) != `{"timeout": 3}` || tl.Reads != External {
		t.Errorf("%+v %+v", tl, tl.Handler)
	}
	// Without the plugin installed, the same file is invalid.
	if _, errs := Parse("fetch.json", []byte(src), FirstParty()); len(errs) == 0 || !strings.Contains(errs[0].Msg, `unknown handler type "httpGet"`) {
		t.Errorf("want unknown handler type, got %v", errs)
	}
	// exec-only fields are rejected for plugin types.
	src = tool2("fetch", `{"type": "object"}`, `{"type": "httpGet", "bin": "curl"}`, "")
	if _, errs := Parse("fetch.json", []byte(src), cat); len(errs) == 0 || !strings.Contains(errs[0].Msg, "handler.bin is not allowed") {
		t.Errorf("want bin rejected, got %v", errs)
	}
}

func TestLoadDirCrossFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go_test.json", tool("goTest", `{"type": "exec", "bin": "go"}`, `"slashCommand": "test",`))
	write("go_vet.json", tool("goVet", `{"type": "exec", "bin": "go"}`, `"slashCommand": "test",`))
	write("notes.txt", "not a tool")
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDir(dir, FirstParty())
	errs, ok := err.(Errors)
	if !ok || len(errs) != 1 || !strings.Contains(errs[0].Msg, `slashCommand "test" is already used by goTest`) || errs[0].Line != 2 {
		t.Fatalf("want one slash clash on line 2, got %v", err)
	}
	write("go_vet.json", tool("goVet", `{"type": "exec", "bin": "go"}`, `"slashCommand": "vet",`))
	set, err := LoadDir(dir, FirstParty())
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Tools) != 2 || set.Lookup("goVet") == nil || set.Lookup("nope") != nil {
		t.Errorf("tools: %v", set.Tools)
	}
}
