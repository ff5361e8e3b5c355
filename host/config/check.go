package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/internal/diag"
	"github.com/opair-dev/opair/internal/strictjson"
)

// parsed is what one file says, section by section. A new section adds a
// field here, an entry in sections, a checker method and a line in merge.
type parsed struct {
	permissions []permission.Rule
	exec        execSection
	pins        map[string]string
	models      map[string]Role
	loops       map[string]Loop
	mcpServers  map[string]MCPServer
}

type execSection struct {
	timeout   setting[time.Duration]
	outputCap setting[int]
}

// setting is an optional value and where it was written.
type setting[T any] struct {
	v   T
	set bool
	at  Diagnostic // file, line and column of the value
}

func (s setting[T]) tighten(msg, hint string) Diagnostic {
	d := s.at
	d.Msg, d.Hint = msg, hint
	return d
}

// section is one top-level key of a config file.
type section struct {
	name    string
	project bool // may appear in the project file
	check   func(c *checker, m *strictjson.Member, p *parsed)
}

// sections lists the top-level keys, in the order hints name them.
var sections = []section{
	{"permissions", true, (*checker).permissions},
	{"exec", true, (*checker).exec},
	{"plugins", false, (*checker).plugins},
	{"models", false, (*checker).models},
	{"loops", false, (*checker).loops},
	{"mcpServers", false, (*checker).mcpServers},
}

var (
	ruleKeys    = []string{"tool", "args", "path", "action"}
	execKeys    = []string{"timeout", "outputCap"}
	pluginsKeys = []string{"pins"}

	pluginNameRE = regexp.MustCompile(`^opair-plugin-[a-z0-9][a-z0-9-]*$`)
	sha256RE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func sectionNames(projectOnly bool) []string {
	var out []string
	for _, s := range sections {
		if s.project || !projectOnly {
			out = append(out, s.name)
		}
	}
	return out
}

// checker checks one file.
type checker struct {
	l       *loader
	file    string // the path, for diagnostics
	source  string // the path as rules name it (~/…)
	project bool
	src     []byte
	lines   *strictjson.Lines
	diags   Errors
}

func (c *checker) pos(off int) Diagnostic {
	line, col := c.lines.Position(off)
	return Diagnostic{File: c.file, Line: line, Col: col}
}

func (c *checker) errAt(off int, hint, format string, args ...any) {
	d := c.pos(off)
	d.Msg, d.Hint = fmt.Sprintf(format, args...), hint
	c.diags = append(c.diags, d)
}

func (c *checker) kind() string {
	if c.project {
		return "project config"
	}
	return "config"
}

func (c *checker) check() *parsed {
	defer func() {
		sort.SliceStable(c.diags, func(i, j int) bool {
			a, b := c.diags[i], c.diags[j]
			return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
		})
		c.l.diags = append(c.l.diags, c.diags...)
	}()
	root, perrs := strictjson.Parse(c.src, strictjson.Limits{MaxBytes: MaxFileBytes, MaxDepth: MaxDepth})
	for _, e := range perrs {
		msg := e.Msg
		if e.Related >= 0 {
			l, col := c.lines.Position(e.Related)
			msg += fmt.Sprintf(" (first at line %d, column %d)", l, col)
		}
		c.errAt(e.Offset, e.Hint, "%s", msg)
	}
	if root == nil {
		return nil
	}
	if root.Kind != strictjson.Object {
		c.errAt(root.Start, `a config file is one JSON object such as {"permissions": []}`, "the file holds a %s, not an object", root.Kind)
		return nil
	}
	p := &parsed{}
	all := sectionNames(false)
	for i := range root.Members {
		m := &root.Members[i]
		si := slices.IndexFunc(sections, func(s section) bool { return s.name == m.Key })
		switch {
		case si < 0:
			c.unknownKey(m, "the "+c.kind(), all, sectionNames(c.project), "sections")
		case c.project && !sections[si].project:
			c.errAt(m.KeyStart, fmt.Sprintf("a project config may contain only: %s; put %q in your user config", strings.Join(sectionNames(true), ", "), m.Key),
				"section %q is not allowed in a project config", m.Key)
		default:
			sections[si].check(c, m, p)
		}
	}
	return p
}

// keys checks an object's keys against the fields it may hold.
func (c *checker) keys(obj *strictjson.Node, where string, allowed []string) {
	for i := range obj.Members {
		if m := &obj.Members[i]; !slices.Contains(allowed, m.Key) {
			c.unknownKey(m, where, allowed, allowed, "fields")
		}
	}
}

// unknownKey reports a key that is not one of allowed: a case variant, or
// an unknown field with the nearest valid one. valid is what the hint lists.
func (c *checker) unknownKey(m *strictjson.Member, where string, allowed, valid []string, what string) {
	if k := diag.CaseVariant(m.Key, allowed); k != "" {
		c.errAt(m.KeyStart, fmt.Sprintf("write it %q; keys are case-sensitive, and a case variant could silently override %q", k, k),
			"key %q in %s differs from the field %q only by case", m.Key, where, k)
		return
	}
	hint := fmt.Sprintf("valid %s are: %s", what, strings.Join(valid, ", "))
	if m.Key == "$schema" {
		hint = "a config accepts only its own fields; point your editor at schema/config.schema.json in its settings instead (" + hint + ")"
	} else if near := diag.Nearest(m.Key, allowed); near != "" {
		hint = fmt.Sprintf("did you mean %q? (%s)", near, hint)
	}
	c.errAt(m.KeyStart, hint, "unknown field %q in %s", m.Key, where)
}

// field returns an object member's value if its kind is right, reporting a
// wrong kind. A missing member returns nil silently.
func (c *checker) field(obj *strictjson.Node, key, where string, kind strictjson.Kind, example string) *strictjson.Node {
	m := obj.Member(key)
	if m == nil {
		return nil
	}
	if m.Value.Kind != kind {
		c.errAt(m.Value.Start, fmt.Sprintf("write %s as a JSON %s, e.g. %s", key, kind, example), "%s.%s must be a %s, not a %s", where, key, kind, m.Value.Kind)
		return nil
	}
	return m.Value
}

// object checks that a section's value is an object.
func (c *checker) object(m *strictjson.Member, example string) *strictjson.Node {
	if m.Value.Kind != strictjson.Object {
		c.errAt(m.Value.Start, "write it as an object, e.g. "+example, "%s must be an object, not a %s", m.Key, m.Value.Kind)
		return nil
	}
	return m.Value
}

// permissions checks the rule list (SPEC §3.4).
func (c *checker) permissions(m *strictjson.Member, p *parsed) {
	const example = `[{"tool": "goTest", "args": "-run *", "action": "allow"}]`
	if m.Value.Kind != strictjson.Array {
		c.errAt(m.Value.Start, "write it as a list of rules, e.g. "+example, "permissions must be an array, not a %s", m.Value.Kind)
		return
	}
	p.permissions = []permission.Rule{}
	for i, e := range m.Value.Elems {
		where := fmt.Sprintf("permissions[%d]", i)
		if e.Kind != strictjson.Object {
			c.errAt(e.Start, `a rule is an object such as {"tool": "goTest", "action": "allow"}`, "%s must be an object, not a %s", where, e.Kind)
			continue
		}
		if r, ok := c.rule(e, where); ok {
			p.permissions = append(p.permissions, r)
		}
	}
}

func (c *checker) rule(e *strictjson.Node, where string) (permission.Rule, bool) {
	n0 := len(c.diags)
	c.keys(e, where, ruleKeys)
	line, _ := c.lines.Position(e.Start)
	r := permission.Rule{Source: fmt.Sprintf("%s:%d", c.source, line)}

	if tn := c.field(e, "tool", where, strictjson.String, `"goTest" or "mcp_*"`); tn != nil {
		switch {
		case tn.Str == "":
			c.errAt(tn.Start, `name a tool, or write "*" for every tool`, "%s.tool is empty", where)
		case strings.IndexFunc(tn.Str, badPatternRune) >= 0:
			c.errAt(tn.Start, "tool names are single words such as goTest; use * and ? as wildcards", "%s.tool %q contains white space or a control character, so it would never match a tool", where, tn.Str)
		default:
			r.Tool = tn.Str
		}
	} else if e.Member("tool") == nil {
		c.errAt(e.Start, `add "tool": a tool name or a wildcard such as "*" or "git*"`, "%s is missing \"tool\"", where)
	}

	if an := c.field(e, "args", where, strictjson.String, `"-run *"`); an != nil {
		switch {
		case an.Str == "":
			c.errAt(an.Start, "remove args to match every call of the tool", "%s.args is empty", where)
		case strings.ContainsAny(an.Str, "\x00\n\r"):
			c.errAt(an.Start, "arguments never contain NUL or newline characters, so the rule would never match", "%s.args contains a NUL or newline character", where)
		default:
			r.Args = an.Str
		}
	}

	if pn := c.field(e, "path", where, strictjson.String, `"secrets/**"`); pn != nil {
		r.Path = c.pathPattern(pn, where)
	}
	if e.Member("args") != nil && e.Member("path") != nil {
		c.errAt(e.Member("path").KeyStart, "a rule matches either the arguments or the paths of a call; write two rules",
			"%s has both \"args\" and \"path\"", where)
	}

	an := c.field(e, "action", where, strictjson.String, `"allow", "ask" or "deny"`)
	switch {
	case an == nil && e.Member("action") == nil:
		c.errAt(e.Start, `add "action": "allow", "ask" or "deny"`, "%s is missing \"action\"", where)
	case an == nil:
	default:
		switch a := permission.Action(an.Str); a {
		case permission.Allow, permission.Ask, permission.Deny:
			r.Action = a
			if c.project && a == permission.Allow {
				c.errAt(an.Start, "a repository must not be able to grant itself permissions: a project config may only tighten (ask or deny); put allow rules in your user config",
					"%s %s allows; a project config may not allow", where, r.String())
			}
		default:
			hint := `use "allow", "ask" or "deny"`
			if l := strings.ToLower(an.Str); l == "allow" || l == "ask" || l == "deny" {
				hint = fmt.Sprintf("write it in lower case: %q", l)
			}
			c.errAt(an.Start, hint, "%s.action %q is not one of allow, ask, deny", where, an.Str)
		}
	}
	return r, len(c.diags) == n0
}

func badPatternRune(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// pathPattern checks a path glob and expands a leading ~. It returns "" after
// reporting a problem.
func (c *checker) pathPattern(n *strictjson.Node, where string) string {
	s := n.Str
	switch {
	case s == "":
		c.errAt(n.Start, "remove path to match every call of the tool", "%s.path is empty", where)
		return ""
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		c.errAt(n.Start, "remove the control character", "%s.path contains a control character", where)
		return ""
	case strings.HasPrefix(s, "$"):
		c.errAt(n.Start, "environment variables are not expanded; write ~/ for the home directory, or the absolute path", "%s.path %q starts with a variable", where, s)
		return ""
	case s == "~" || strings.HasPrefix(s, "~/"):
		home, err := c.l.homeDir()
		if err != nil {
			c.errAt(n.Start, "write the absolute path instead of ~", "%s.path %q: cannot expand ~: %v", where, s, err)
			return ""
		}
		s = filepath.ToSlash(home) + s[1:]
	case strings.HasPrefix(s, "~"):
		c.errAt(n.Start, "only ~/ (your home directory) is expanded; write the absolute path", "%s.path %q names another user's home directory", where, s)
		return ""
	}
	if !doublestar.ValidatePattern(s) {
		c.errAt(n.Start, "check the brackets [] and braces {}, and that a trailing \\ escapes something", "%s.path %q is not a valid glob", where, n.Str)
		return ""
	}
	segs := strings.Split(strings.TrimPrefix(s, "/"), "/")
	for _, seg := range segs {
		if seg == "" || seg == "." || seg == ".." {
			hint := `write the path as a resolved path would look: relative to the project root ("src/**") or absolute ("/etc/**"), with no empty, "." or ".." segment and no trailing /`
			c.errAt(n.Start, hint, "%s.path %q would never match: real paths have no empty, \".\" or \"..\" segment", where, n.Str)
			return ""
		}
	}
	return s
}

// exec checks the exec section.
func (c *checker) exec(m *strictjson.Member, p *parsed) {
	obj := c.object(m, `{"timeout": "10m", "outputCap": 65536}`)
	if obj == nil {
		return
	}
	c.keys(obj, "exec", execKeys)
	if n := c.field(obj, "timeout", "exec", strictjson.String, `"10m"`); n != nil {
		d, err := time.ParseDuration(n.Str)
		switch {
		case err != nil:
			c.errAt(n.Start, `write a Go duration such as "90s", "10m" or "1h30m"`, "exec.timeout %q is not a duration", n.Str)
		case d <= 0:
			c.errAt(n.Start, `write a positive duration such as "10m"`, "exec.timeout %q is not positive", n.Str)
		case d > MaxTimeout:
			c.errAt(n.Start, fmt.Sprintf("use at most %q", "24h"), "exec.timeout %q is over the limit of 24h", n.Str)
		default:
			p.exec.timeout = setting[time.Duration]{v: d, set: true, at: c.pos(n.Start)}
		}
	}
	if n := c.field(obj, "outputCap", "exec", strictjson.Number, "65536"); n != nil {
		v, err := strconv.ParseInt(n.Num, 10, 64)
		switch {
		case err != nil && strings.ContainsAny(n.Num, ".eE") && !strings.HasPrefix(n.Num, "-"):
			c.errAt(n.Start, "write a whole number of bytes, e.g. 65536", "exec.outputCap %s is not an integer", n.Num)
		case err == nil && v >= MinOutputCap && v <= MaxOutputCap:
			p.exec.outputCap = setting[int]{v: int(v), set: true, at: c.pos(n.Start)}
		default:
			c.errAt(n.Start, fmt.Sprintf("use a number of bytes between %d (1 KiB) and %d (64 MiB)", MinOutputCap, MaxOutputCap), "exec.outputCap %s is out of range", n.Num)
		}
	}
}

// plugins checks the plugins section.
func (c *checker) plugins(m *strictjson.Member, p *parsed) {
	obj := c.object(m, `{"pins": {"opair-plugin-foo": "<sha256 of the binary>"}}`)
	if obj == nil {
		return
	}
	c.keys(obj, "plugins", pluginsKeys)
	pins := c.field(obj, "pins", "plugins", strictjson.Object, `{"opair-plugin-foo": "<sha256 of the binary>"}`)
	if pins == nil {
		return
	}
	p.pins = map[string]string{}
	for _, pm := range pins.Members {
		ok := true
		if !pluginNameRE.MatchString(pm.Key) {
			ok = false
			c.errAt(pm.KeyStart, "plugin names are opair-plugin- followed by lower-case letters, digits and dashes, e.g. opair-plugin-foo",
				"plugins.pins: %q is not a plugin name (^opair-plugin-[a-z0-9][a-z0-9-]*$)", pm.Key)
		}
		v := pm.Value
		switch {
		case v.Kind != strictjson.String:
			ok = false
			c.errAt(v.Start, "write the sha256 of the plugin binary as a string of 64 hex digits (sha256sum <binary>)", "plugins.pins.%s must be a string, not a %s", pm.Key, v.Kind)
		case sha256RE.MatchString(v.Str):
		case sha256RE.MatchString(strings.ToLower(v.Str)):
			ok = false
			c.errAt(v.Start, "write it in lower case: "+strings.ToLower(v.Str), "plugins.pins.%s is not in lower case", pm.Key)
		default:
			ok = false
			c.errAt(v.Start, "a pin is the sha256 of the plugin binary: 64 lower-case hex digits, as sha256sum prints it", "plugins.pins.%s is not a sha256 (%d characters)", pm.Key, len(v.Str))
		}
		if ok {
			p.pins[pm.Key] = v.Str
		}
	}
}
