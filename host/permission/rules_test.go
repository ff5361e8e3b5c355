package permission

import (
	"encoding/json"
	"strings"
	"testing"
)

// OpenCode's Wildcard.match vectors (notes/opencode-crush.md §2.2), minus
// the Windows slash and case normalisation, which Opair does not do.
func TestWildcardOpenCodeVectors(t *testing.T) {
	tests := []struct {
		pattern, input string
		want           bool
	}{
		{"file?.txt", "file1.txt", true},
		{"file?.txt", "file12.txt", false},
		{"foo+bar", "foo+bar", true},
		{"ls *", "ls", true},
		{"ls *", "ls -la", true},
		{"ls *", "ls foo bar", true},
		{"ls*", "ls", true},
		{"ls*", "lstmeval", true},
		{"ls *", "lstmeval", false},
		{"git *", "git", true},
		{"git *", "git status", true},
		{"git *", "git commit -m foo", true},
		{"/Users/test/*", "/users/test/file", false}, // case-sensitive
		{"/Users/test/*", "/Users/test/a/b", true},   // * crosses /
		// Beyond the vectors.
		{"*", "", true},
		{"*", "anything at all", true},
		{"", "", true},
		{"", "x", false},
		{"mcp_*", "mcp_server_tool", true},
		{"mcp_*", "mcp", false},
		{"git*", "github", true},
		{"go?est", "goTest", true},
		{"go?est", "goTTest", false},
		{"?", "é", true}, // one character, not one byte
		{"??", "é", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"-run *", "-run", true},
		{"-run *", "-run TestX ./...", true},
		{"-run *", "-runx", false},
		{"-run *", "-v -run X", false},
		{"*-exec*", "./... -exec=/tmp/x", true},
		{"a.c", "abc", false}, // regex characters are literal
		{"(x)", "(x)", true},
	}
	for _, tt := range tests {
		if got := Wildcard(tt.pattern, tt.input); got != tt.want {
			t.Errorf("Wildcard(%q, %q) = %v, want %v", tt.pattern, tt.input, got, tt.want)
		}
	}
}

func static(a Action) Decision { return Decision{a, "table row " + string(a)} }

func TestDecide(t *testing.T) {
	goTest := func(args ...string) Call {
		return Call{Tool: "goTest", Args: args, Static: static(Allow)}
	}
	edit := func(a Action, paths ...string) Call {
		return Call{Tool: "editFile", Paths: paths, Static: static(a)}
	}
	bash := func(args string) Call {
		return Call{Tool: "bash", Args: strings.Fields(args), Static: static(Ask)}
	}
	r := func(tool, args, path string, a Action) Rule {
		return Rule{Tool: tool, Args: args, Path: path, Action: a}
	}

	tests := []struct {
		name          string
		call          Call
		user, project []Rule
		want          Action
		reason        string // substring of the reason
	}{
		// No rule: the table decides.
		{"no rules: allow", goTest("-v"), nil, nil, Allow, "table row allow"},
		{"no rules: ask", bash("rm"), nil, nil, Ask, "table row ask"},
		{"no matching rule", bash("rm"), []Rule{r("edit", "", "", Allow)}, nil, Ask, "table row"},

		// OpenCode's rule-list vectors (notes §2.2), with bash as a tool
		// whose pattern is its args; no match gives the static ask.
		{"oc: bash rm deny", bash("rm"), []Rule{r("bash", "rm", "", Deny)}, nil, Deny, "rule 1"},
		{"oc: bash * allow", bash("rm"), []Rule{r("bash", "*", "", Allow)}, nil, Allow, "rule 1"},
		{"oc: last wins (deny)", bash("rm"), []Rule{r("bash", "*", "", Allow), r("bash", "rm", "", Deny)}, nil, Deny, "rule 2"},
		{"oc: last wins (allow)", bash("rm"), []Rule{r("bash", "rm", "", Deny), r("bash", "*", "", Allow)}, nil, Allow, "rule 2"},
		{"oc: unknown tool", Call{Tool: "unknown_tool", Args: []string{"anything"}, Static: static(Ask)}, []Rule{r("bash", "*", "", Allow)}, nil, Ask, "table row"},
		{"oc: * * deny", bash("rm"), []Rule{r("*", "*", "", Deny)}, nil, Deny, "rule 1"},
		{"oc: mcp_* allow", Call{Tool: "mcp_server_tool", Args: []string{"anything"}, Static: static(Ask)}, []Rule{r("mcp_*", "*", "", Allow)}, nil, Allow, "rule 1"},
		{"oc: mcp_dangerous deny last", Call{Tool: "mcp_dangerous", Static: static(Ask)}, []Rule{r("*", "", "", Ask), r("mcp_*", "", "", Allow), r("mcp_dangerous", "", "", Deny)}, nil, Deny, "rule 3"},
		{"oc: * deny after bash allow", bash("rm"), []Rule{r("bash", "*", "", Allow), r("*", "*", "", Deny)}, nil, Deny, "rule 2"},
		{"oc: git * allow", bash("git status"), []Rule{r("bash", "*", "", Deny), r("bash", "git *", "", Allow)}, nil, Allow, "rule 2"},
		{"oc: git * allow, rm", bash("rm foo"), []Rule{r("bash", "*", "", Deny), r("bash", "git *", "", Allow)}, nil, Deny, "rule 1"},
		{"oc: edit src/* allow", edit(Ask, "src/foo.ts"), []Rule{r("editFile", "", "src/*", Allow)}, nil, Allow, "rule 1"},
		{"oc: edit src/* outside", edit(Ask, "etc/passwd"), []Rule{r("editFile", "", "src/*", Allow)}, nil, Ask, "table row"},
		{"oc: specific allow after deny", edit(Ask, "src/components/Button.tsx"), []Rule{r("editFile", "", "src/*", Deny), r("editFile", "", "src/components/*", Allow)}, nil, Allow, "rule 2"},
		// OpenCode says deny here because its * crosses /; a path * does not,
		// so src/* does not match and the allow stands. With ** it is deny.
		{"oc divergence: src/* stays in its segment", edit(Ask, "src/components/Button.tsx"), []Rule{r("editFile", "", "src/components/*", Allow), r("editFile", "", "src/*", Deny)}, nil, Allow, "rule 1"},
		{"oc: src/** deny last", edit(Ask, "src/components/Button.tsx"), []Rule{r("editFile", "", "src/components/*", Allow), r("editFile", "", "src/**", Deny)}, nil, Deny, "rule 2"},
		{"oc: secret deny last", edit(Ask, "src/secret.ts"), []Rule{r("editFile", "", "", Ask), r("editFile", "", "src/*", Allow), r("editFile", "", "src/secret.ts", Deny)}, nil, Deny, "rule 3"},

		// Args.
		{"args: trailing * matches bare", goTest("-run"), []Rule{r("goTest", "-run *", "", Deny)}, nil, Deny, `args: "-run *"`},
		{"args: trailing * matches more", goTest("-run", "TestX", "./..."), []Rule{r("goTest", "-run *", "", Deny)}, nil, Deny, "rule 1"},
		{"args: no match", goTest("-v", "-run", "X"), []Rule{r("goTest", "-run *", "", Deny)}, nil, Allow, "table row"},
		{"args: * matches no args", goTest(), []Rule{r("goTest", "*", "", Deny)}, nil, Deny, "rule 1"},
		{"args: pattern vs no args", goTest(), []Rule{r("goTest", "-v", "", Deny)}, nil, Allow, "table row"},
		{"args: ? one char", goTest("-count=1"), []Rule{r("goTest", "-count=?", "", Deny)}, nil, Deny, "rule 1"},
		{"args: ? not two", goTest("-count=10"), []Rule{r("goTest", "-count=?", "", Deny)}, nil, Allow, "table row"},
		{"args rule on a call without args", edit(Ask, "a.go"), []Rule{r("editFile", "*", "", Allow)}, nil, Allow, "rule 1"},

		// Tool wildcards.
		{"tool: ? one char", goTest(), []Rule{r("go?est", "", "", Deny)}, nil, Deny, "rule 1"},
		{"tool: prefix", goTest(), []Rule{r("go*", "", "", Ask)}, nil, Ask, "rule 1"},
		{"tool: no match", goTest(), []Rule{r("git*", "", "", Deny)}, nil, Allow, "table row"},

		// Paths.
		{"path: rule never matches a call without paths", goTest(), []Rule{r("*", "", "**", Deny)}, nil, Allow, "table row"},
		{"path: * within a segment", edit(Ask, "a/b/c.go"), []Rule{r("editFile", "", "a/*", Allow)}, nil, Ask, "table row"},
		{"path: ** across segments", edit(Ask, "a/b/c.go"), []Rule{r("editFile", "", "a/**", Allow)}, nil, Allow, "rule 1"},
		{"path: **/ at the front", edit(Ask, "a/b/c.go"), []Rule{r("editFile", "", "**/*.go", Allow)}, nil, Allow, "rule 1"},
		{"path: **/ matches zero dirs", edit(Ask, "c.go"), []Rule{r("editFile", "", "**/*.go", Allow)}, nil, Allow, "rule 1"},
		{"path: * matches a dot file", edit(Allow, "secrets/.env"), []Rule{r("*", "", "secrets/*", Deny)}, nil, Deny, "path secrets/.env"},
		{"path: ** matches the directory itself", edit(Allow, "secrets"), []Rule{r("*", "", "secrets/**", Deny)}, nil, Deny, "rule 1"},
		{"path: ? one char", edit(Ask, "a1.go"), []Rule{r("editFile", "", "a?.go", Allow)}, nil, Allow, "rule 1"},
		{"path: ? not a slash", edit(Ask, "a/.go"), []Rule{r("editFile", "", "a?.go", Allow)}, nil, Ask, "table row"},
		{"path: absolute", edit(Ask, "/home/u/notes/x.md"), []Rule{r("editFile", "", "/home/u/notes/**", Allow)}, nil, Allow, "rule 1"},
		{"path: relative pattern vs absolute path", edit(Ask, "/src/x.go"), []Rule{r("editFile", "", "src/**", Allow)}, nil, Ask, "table row"},
		{"path: malformed allow never matches", edit(Ask, "a[b"), []Rule{r("editFile", "", "a[b", Allow)}, nil, Ask, "table row"},
		{"path: malformed deny always matches", edit(Allow, "x"), []Rule{r("editFile", "", "a[b", Deny)}, nil, Deny, "rule 1"},

		// Several paths.
		{"paths: all allowed", edit(Ask, "src/a.go", "src/b.go"), []Rule{r("editFile", "", "src/**", Allow)}, nil, Allow, "rule 1"},
		{"paths: one not allowed asks", edit(Ask, "src/a.go", "docs/b.md"), []Rule{r("editFile", "", "src/**", Allow)}, nil, Ask, "path docs/b.md"},
		{"paths: one deny denies", edit(Ask, "src/a.go", "secrets/k", "docs/b.md"), []Rule{r("editFile", "", "src/**", Allow), r("*", "", "secrets/**", Deny)}, nil, Deny, "path secrets/k"},
		{"paths: deny first", edit(Allow, "secrets/k", "src/a.go"), []Rule{r("*", "", "secrets/**", Deny)}, nil, Deny, "path secrets/k"},

		// Untrusted.
		{"untrusted: allow ignored", Call{Tool: "npm", Args: []string{"test"}, Untrusted: true, Static: static(Ask)}, []Rule{r("npm", "", "", Allow)}, nil, Ask, "allow ignored, because the tool is untrusted"},
		{"untrusted: deny applies", Call{Tool: "npm", Untrusted: true, Static: static(Ask)}, []Rule{r("npm", "", "", Deny)}, nil, Deny, "rule 1"},
		{"untrusted: static allow raised", Call{Tool: "npm", Untrusted: true, Static: static(Allow)}, nil, nil, Ask, "untrusted"},

		// Repeat.
		{"repeat: asks", Call{Tool: "goTest", Repeat: "same call again", Static: static(Allow)}, nil, nil, Ask, "same call again"},
		{"repeat: allow ignored", Call{Tool: "goTest", Repeat: "same call again", Static: static(Allow)}, []Rule{r("goTest", "", "", Allow)}, nil, Ask, "allow ignored, because same call again"},
		{"repeat: deny applies", Call{Tool: "goTest", Repeat: "same call again", Static: static(Allow)}, []Rule{r("goTest", "", "", Deny)}, nil, Deny, "rule 1"},

		// NotOffered and fail-closed.
		{"not offered: allow rule", Call{Tool: "editFile", Static: static(NotOffered)}, []Rule{r("*", "", "", Allow)}, nil, NotOffered, "table row"},
		{"not offered: deny rule", Call{Tool: "editFile", Static: static(NotOffered)}, []Rule{r("*", "", "", Deny)}, nil, NotOffered, "table row"},
		{"not offered: project deny", Call{Tool: "editFile", Static: static(NotOffered)}, nil, []Rule{r("*", "", "", Deny)}, NotOffered, "table row"},
		{"static deny: allow ignored", Call{Tool: "x", Static: static(Deny)}, []Rule{r("x", "", "", Allow)}, nil, Deny, "ignored: nothing loosens a deny"},
		{"static unknown: deny", Call{Tool: "x"}, []Rule{r("x", "", "", Allow)}, nil, Deny, "failing closed"},
		{"rule with unknown action: deny", goTest(), []Rule{r("goTest", "", "", "maybe")}, nil, Deny, "failing closed"},
		{"rule with not offered action: deny", goTest(), []Rule{r("goTest", "", "", NotOffered)}, nil, Deny, "failing closed"},

		// User tightening.
		{"user ask on static allow", goTest(), []Rule{r("goTest", "", "", Ask)}, nil, Ask, "rule 1"},

		// Project rules only tighten.
		{"project deny over user allow", bash("rm"), []Rule{r("bash", "*", "", Allow)}, []Rule{r("bash", "rm *", "", Deny)}, Deny, "project rule 1"},
		{"project ask over static allow", goTest(), nil, []Rule{r("goTest", "", "", Ask)}, Ask, "project rule 1"},
		{"project allow ignored", bash("rm"), nil, []Rule{r("bash", "", "", Allow)}, Ask, "table row"},
		{"project ask does not loosen user deny", bash("rm"), []Rule{r("bash", "", "", Deny)}, []Rule{r("bash", "", "", Ask)}, Deny, "rule 1"},
		{"project last match wins", bash("rm"), []Rule{r("bash", "", "", Allow)}, []Rule{r("bash", "", "", Deny), r("bash", "", "", Ask)}, Ask, "project rule 2"},
		{"project path deny", edit(Allow, "src/a.go", "vendor/x.go"), nil, []Rule{r("editFile", "", "vendor/**", Deny)}, Deny, "path vendor/x.go"},
		{"project unknown action fails closed", goTest(), nil, []Rule{r("goTest", "", "", "allow-ish")}, Deny, "failing closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.call, tt.user, tt.project)
			if got.Action != tt.want {
				t.Errorf("Decide = %s (%s), want %s", got.Action, got.Reason, tt.want)
			}
			if !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("reason %q does not contain %q", got.Reason, tt.reason)
			}
		})
	}
}

func TestReasonNamesRule(t *testing.T) {
	user := []Rule{
		{Tool: "*", Action: Ask, Source: "~/.config/opair/config.json:4"},
		{Tool: "edit", Action: Deny, Source: "~/.config/opair/config.json:8"},
		{Tool: "goTest", Args: "-run *", Action: Allow, Source: "~/.config/opair/config.json:12"},
	}
	d := Decide(Call{Tool: "goTest", Args: []string{"-run", "TestX"}, Static: static(Allow)}, user, nil)
	want := `rule 3 of ~/.config/opair/config.json:12 {tool: "goTest", args: "-run *"}: allow`
	if d.Action != Allow || d.Reason != want {
		t.Errorf("got %s %q, want allow %q", d.Action, d.Reason, want)
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct {
		name          string
		call          Call
		user, project []Rule
		want          []string // JSON of each rule; nil: no rule can allow it
	}{
		{"exact args", Call{Tool: "bash", Args: []string{"rm", "-rf", "build"}, Static: static(Ask)}, nil, nil,
			[]string{`{"tool": "bash", "args": "rm -rf build", "action": "allow"}`}},
		{"no args: tool alone", Call{Tool: "webFetch", Static: static(Ask)}, nil, nil,
			[]string{`{"tool": "webFetch", "action": "allow"}`}},
		{"one path", Call{Tool: "readFile", Paths: []string{"/etc/hosts"}, Static: static(Ask)}, nil, nil,
			[]string{`{"tool": "readFile", "path": "/etc/hosts", "action": "allow"}`}},
		{"paths not yet allowed only", Call{Tool: "editFile", Paths: []string{"src/a.go", ".github/ci.yml", ".env"}, Static: static(Ask)},
			[]Rule{{Tool: "editFile", Path: "src/**", Action: Allow}}, nil,
			[]string{`{"tool": "editFile", "path": ".github/ci.yml", "action": "allow"}`, `{"tool": "editFile", "path": ".env", "action": "allow"}`}},
		{"glob characters escaped", Call{Tool: "readFile", Paths: []string{"/tmp/a*b[1].txt"}, Static: static(Ask)}, nil, nil,
			[]string{`{"tool": "readFile", "path": "/tmp/a\\*b\\[1\\].txt", "action": "allow"}`}},
		{"overrides a user deny (appended last)", Call{Tool: "bash", Args: []string{"ls"}, Static: static(Ask)}, []Rule{{Tool: "bash", Action: Deny}}, nil,
			[]string{`{"tool": "bash", "args": "ls", "action": "allow"}`}},
		{"html characters not escaped", Call{Tool: "bash", Args: []string{"echo", "<a&b>"}, Static: static(Ask)}, nil, nil,
			[]string{`{"tool": "bash", "args": "echo <a&b>", "action": "allow"}`}},
		{"untrusted", Call{Tool: "npm", Untrusted: true, Static: static(Ask)}, nil, nil, nil},
		{"repeat", Call{Tool: "goTest", Repeat: "again", Static: static(Allow)}, nil, nil, nil},
		{"not offered", Call{Tool: "editFile", Static: static(NotOffered)}, nil, nil, nil},
		{"static deny", Call{Tool: "x", Static: static(Deny)}, nil, nil, nil},
		{"project deny", Call{Tool: "bash", Args: []string{"rm"}, Static: static(Ask)}, nil, []Rule{{Tool: "bash", Action: Deny}}, nil},
		{"already allowed", Call{Tool: "goTest", Static: static(Allow)}, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Suggest(tt.call, tt.user, tt.project)
			var js []string
			for _, r := range got {
				js = append(js, r.JSON())
				var v map[string]string
				if err := json.Unmarshal([]byte(r.JSON()), &v); err != nil {
					t.Errorf("JSON() %s is not JSON: %v", r.JSON(), err)
				}
			}
			if strings.Join(js, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Suggest =\n%s\nwant\n%s", strings.Join(js, "\n"), strings.Join(tt.want, "\n"))
			}
			if got != nil {
				if d := Decide(tt.call, append(append([]Rule(nil), tt.user...), got...), tt.project); d.Action != Allow {
					t.Errorf("suggestion does not allow the call: %s (%s)", d.Action, d.Reason)
				}
			}
		})
	}
}
