package permission

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Rule is one entry of a config's permissions list (SPEC §3.4): which calls
// it matches and what it does with them. The config package builds rules from
// the files; this package only matches them.
type Rule struct {
	// Tool is a wildcard over tool names: * matches any run of characters,
	// ? exactly one. Required.
	Tool string
	// Args, when set, is a wildcard over the call's arguments joined by
	// single spaces: * matches anything (spaces included), ? one character,
	// and a trailing " *" also matches no further arguments at all, so
	// "-run *" matches "-run" and "-run TestX ./...". A call without
	// arguments (every tool that is not exec) is matched as "", so only a
	// pattern that matches the empty string, such as "*", matches it. There
	// is no escape character: a * or ? in Args is always a wildcard.
	Args string
	// Path, when set, is a doublestar glob over each real path the call
	// touches: * and ? stay within one segment, ** crosses segments, and
	// [class] and {alt,ernatives} work as in doublestar; \ escapes. Project
	// paths are relative to the root, external ones absolute; ~ must already
	// be expanded. A rule with a Path never matches a call that touches no
	// path. A malformed Path fails closed: it matches for ask and deny rules
	// and never for allow rules.
	Path string
	// Action is Allow, Ask or Deny. Anything else fails closed (deny).
	Action Action
	// Source says where the rule was written, "file:line", for messages.
	Source string
}

// Call is what the gate knows of one tool call when it decides.
type Call struct {
	Tool string
	// Args are an exec tool's arguments as the model gave them (without the
	// handler's bin and subcommand); nil for other tools.
	Args []string
	// Paths are the real, resolved paths the call touches: relative to the
	// project root for project paths, absolute for external ones.
	Paths []string
	// Untrusted tools always ask: no rule turns their ask into allow.
	Untrusted bool
	// Repeat is the repetition rule's reason when it fired for this call
	// (Recent.Check), else "". Like Untrusted, it makes the call ask at
	// least, and no rule turns that ask into allow; a deny rule still denies.
	Repeat string
	// Static is the table's decision for the tool in the current mode
	// (Categories, or the categories of the classes of the call's paths).
	Static Decision
}

// Decide combines a call's static decision with the user's and the
// project's rules (SPEC §3.4):
//
//   - NotOffered stays NotOffered: rules never allow what the mode does not
//     offer, and it is already the strictest outcome.
//   - The user's rules: the last matching rule wins and its action replaces
//     the static one, except that an allow never turns an untrusted or a
//     repeated call's ask into allow, and nothing loosens a static deny
//     (which only failing closed produces).
//   - The project's rules: the last matching one applies only if stricter.
//   - A call touching several paths is decided for each path separately;
//     the strictest result wins, so it is allowed only if every path is, and
//     one deny denies it.
//
// The reason names the rule that decided, or the table row.
func Decide(c Call, user, project []Rule) Decision {
	base := c.Static
	switch base.Action {
	case NotOffered:
		return base
	case Allow, Ask, Deny:
	default:
		return Decision{Deny, fmt.Sprintf("unknown static decision %q: failing closed", base.Action)}
	}
	if c.Untrusted && base.Action == Allow {
		base = Decision{Ask, "untrusted: it can run code that is not part of the project, so every call asks"}
	}
	if c.Repeat != "" && base.Action == Allow {
		base = Decision{Ask, c.Repeat}
	}
	if len(c.Paths) == 0 {
		return decideOne(c, base, "", false, user, project)
	}
	var out Decision
	for i, p := range c.Paths {
		d := decideOne(c, base, p, true, user, project)
		if i == 0 || d.Action.strictness() > out.Action.strictness() {
			out = d
		}
	}
	return out
}

// decideOne decides the call for one path (or for none).
func decideOne(c Call, base Decision, path string, hasPath bool, user, project []Rule) Decision {
	d := base
	if i := lastMatch(user, c, path, hasPath); i >= 0 {
		r := user[i]
		desc := r.describe("rule", i)
		switch {
		case !r.Action.valid():
			d = Decision{Deny, fmt.Sprintf("%s: unknown action %q: failing closed", desc, r.Action)}
		case d.Action == Deny && r.Action != Deny:
			d.Reason = fmt.Sprintf("%s (%s ignored: nothing loosens a deny)", d.Reason, desc)
		case r.Action == Allow && c.Untrusted && d.Action == Ask:
			d.Reason = fmt.Sprintf("%s: allow ignored, because the tool is untrusted and every call of it asks (%s)", desc, d.Reason)
		case r.Action == Allow && c.Repeat != "" && d.Action == Ask:
			d.Reason = fmt.Sprintf("%s: allow ignored, because %s", desc, c.Repeat)
		default:
			d = Decision{r.Action, fmt.Sprintf("%s: %s", desc, r.Action)}
		}
	}
	if i := lastMatch(project, c, path, hasPath); i >= 0 {
		r := project[i]
		desc := r.describe("project rule", i)
		switch {
		case !r.Action.valid():
			d = Decision{Deny, fmt.Sprintf("%s: unknown action %q: failing closed", desc, r.Action)}
		case r.Action.strictness() > d.Action.strictness():
			d = Decision{r.Action, fmt.Sprintf("%s: %s", desc, r.Action)}
		}
	}
	if hasPath && d.Action != Allow {
		d.Reason = fmt.Sprintf("%s (path %s)", d.Reason, path)
	}
	return d
}

func (a Action) valid() bool { return a == Allow || a == Ask || a == Deny }

// lastMatch returns the index of the last rule matching the call, or -1.
func lastMatch(rules []Rule, c Call, path string, hasPath bool) int {
	for i := len(rules) - 1; i >= 0; i-- {
		if rules[i].matches(c, path, hasPath) {
			return i
		}
	}
	return -1
}

func (r Rule) matches(c Call, path string, hasPath bool) bool {
	if !Wildcard(r.Tool, c.Tool) {
		return false
	}
	if r.Args != "" && !Wildcard(r.Args, strings.Join(c.Args, " ")) {
		return false
	}
	if r.Path != "" {
		if !hasPath {
			return false
		}
		ok, err := doublestar.Match(r.Path, path)
		if err != nil {
			return r.Action != Allow // fail closed
		}
		return ok
	}
	return true
}

// describe renders a rule for a reason: `rule 3 of ~/.config/opair/
// config.json:12 {tool: "goTest", args: "-run *"}`. i is its index in its
// list.
func (r Rule) describe(kind string, i int) string {
	s := fmt.Sprintf("%s %d", kind, i+1)
	if r.Source != "" {
		s += " of " + r.Source
	}
	return s + " " + r.String()
}

// String renders the rule's match part: {tool: "goTest", args: "-run *"}.
func (r Rule) String() string {
	s := fmt.Sprintf("{tool: %q", r.Tool)
	if r.Args != "" {
		s += fmt.Sprintf(", args: %q", r.Args)
	}
	if r.Path != "" {
		s += fmt.Sprintf(", path: %q", r.Path)
	}
	return s + "}"
}

// JSON renders the rule as one entry of the config's permissions list, to
// paste into the file: {"tool": "goTest", "args": "-run TestX", "action": "allow"}.
func (r Rule) JSON() string {
	var b strings.Builder
	field := func(k, v string) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jsonString(k))
		b.WriteString(": ")
		b.WriteString(jsonString(v))
	}
	field("tool", r.Tool)
	if r.Args != "" {
		field("args", r.Args)
	}
	if r.Path != "" {
		field("path", r.Path)
	}
	field("action", string(r.Action))
	return "{" + b.String() + "}"
}

func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// Suggest returns the narrowest rules that, appended to the user's rules,
// would allow a call that was not allowed: for the error of an ask with no
// human to ask (SPEC §3.4). The rules name the tool exactly; a call that
// touches paths gets one rule per path that is not yet allowed, naming that
// path exactly (glob characters escaped); otherwise the rule names the exact
// arguments joined by spaces (no arguments: the tool alone). Args have no
// escape, so a * or ? in an argument makes the suggested rule match a little
// more than this call.
//
// It returns nil when no user rule can allow the call: the mode does not
// offer the tool, the tool is untrusted, the call repeats, the table fails
// closed, or a project rule holds it back. The suggestion is checked with
// Decide before it is returned.
func Suggest(c Call, user, project []Rule) []Rule {
	if Decide(c, user, project).Action == Allow {
		return nil
	}
	var out []Rule
	if len(c.Paths) > 0 {
		seen := map[string]bool{}
		for _, p := range c.Paths {
			one := c
			one.Paths = []string{p}
			if seen[p] || Decide(one, user, project).Action == Allow {
				continue
			}
			seen[p] = true
			out = append(out, Rule{Tool: c.Tool, Path: escapeGlob(p), Action: Allow})
		}
	} else {
		out = []Rule{{Tool: c.Tool, Args: strings.Join(c.Args, " "), Action: Allow}}
	}
	withSuggestion := append(append([]Rule(nil), user...), out...)
	if Decide(c, withSuggestion, project).Action != Allow {
		return nil
	}
	return out
}

// escapeGlob escapes the characters doublestar treats specially, so the
// pattern matches exactly p.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Wildcard reports whether s matches pattern, OpenCode's wildcard: * matches
// any run of characters (including / and spaces), ? exactly one character,
// everything else itself, case-sensitively; a pattern ending in " *" also
// matches s without that tail ("git *" matches "git").
func Wildcard(pattern, s string) bool {
	if head, ok := strings.CutSuffix(pattern, " *"); ok && globStar(head, s) {
		return true
	}
	return globStar(pattern, s)
}

// globStar matches * and ? over runes, with the usual single backtrack
// point (linear in practice, quadratic at worst).
func globStar(p, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[si:])
				pi++
				si += n
				continue
			default:
				_, pn := utf8.DecodeRuneInString(p[pi:])
				_, sn := utf8.DecodeRuneInString(s[si:])
				if pn == sn && p[pi:pi+pn] == s[si:si+sn] {
					pi += pn
					si += sn
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starS:])
		starS += n
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
