package argfilter

import (
	"fmt"
	"strings"
)

// checkDeny applies denyArgs: plain prefixes first, then the style's readings.
func checkDeny(style Style, deny []string, args []string) *Rejection {
	entries := parseEntries(deny)
	end := endOfOptions(style, args)
	for i, a := range args {
		for _, e := range entries {
			if strings.HasPrefix(a, e.raw) {
				return &Rejection{Index: i, Arg: a, Prefix: e.raw, List: DenyList, Reason: "plain prefix match"}
			}
		}
		// Every entry's hardened reading; within a cluster of short options
		// the earliest match names the rejection ("-nOtouch" is -O, not
		// the c of its value).
		v := newView(args, i)
		best, bestPos := -1, 0
		var bestWhy string
		for k := range entries {
			e := &entries[k]
			var why string
			pos := 0
			switch style {
			case Go:
				why = goDeny(e, v)
			case GNU, Git:
				if end < 0 || i < end {
					why, pos = getoptDeny(style, e, v)
				}
			default:
				why, pos = anyDeny(e, v)
			}
			if why != "" && (best < 0 || pos < bestPos) {
				best, bestPos, bestWhy = k, pos, why
			}
		}
		if best >= 0 {
			return &Rejection{Index: i, Arg: a, Prefix: entries[best].raw, List: DenyList, Reason: bestWhy}
		}
	}
	return nil
}

// endOfOptions returns the index of the "--" that ends the options for GNU
// and Git, or -1. Go and Any never trust "--".
//
// A "--" ends the options only if it cannot be the value of the option
// before it: getopt gives "--" to an option that requires a value ("-e --"
// or "--exclude --"), and the options continue after it. Without the
// binary's option table, any preceding short option or long option without
// "=value" may want one. A "--" that is the first argument is not trusted
// either, since the subcommand words before it may end with such an option.
func endOfOptions(style Style, args []string) int {
	if style != GNU && style != Git {
		return -1
	}
	for i := 1; i < len(args); i++ {
		if args[i] == "--" && !mayTakeNext(args[i-1]) {
			return i
		}
	}
	return -1
}

// mayTakeNext reports whether an option could take the next argument as its
// value.
func mayTakeNext(p string) bool {
	if len(p) < 2 || p[0] != '-' || p == "--" {
		return false
	}
	return !(p[1] == '-' && strings.Contains(p, "="))
}

// view is one argument read every way the styles can, computed once per
// argument.
type view struct {
	a       string
	next    string // the following argument, a possible split value
	hasNext bool
	opt     bool // starts with "-" and is longer than "-"

	// Go and nopt: all leading dashes stripped, cut at the first "=".
	dashes            int
	body, name, value string
	eq                bool
	test, testName    string // body and name without cmd/go's "test." alias prefix, or ""

	// GNU and Git long options ("--name[=value]").
	long          bool
	lname, lvalue string
	leq           bool
	noBase        string // nopt: name without its "no-" prefixes
	noNeg         bool   // an odd number of "no-" prefixes
}

func newView(args []string, i int) *view {
	v := &view{a: args[i]}
	if i+1 < len(args) {
		v.next, v.hasNext = args[i+1], true
	}
	a := v.a
	if len(a) < 2 || a[0] != '-' {
		return v
	}
	v.opt = true
	v.body = strings.TrimLeft(a, "-")
	v.dashes = len(a) - len(v.body)
	v.name, v.value, v.eq = strings.Cut(v.body, "=")
	if rest, ok := strings.CutPrefix(v.body, "test."); ok && rest != "" {
		v.test = rest
		v.testName, _, _ = strings.Cut(rest, "=")
	}
	if a[1] == '-' && a != "--" {
		v.long = true
		v.lname, v.lvalue, v.leq = strings.Cut(a[2:], "=")
	}
	v.noBase, v.noNeg = stripNo(v.name)
	return v
}

// goDeny reads an argument as a Go flag: any number of leading dashes (the
// flag package takes one or two), name, optional "=value"; cmd/go's
// "-test.name" alias; the value in the next argument.
func goDeny(e *entry, v *view) string {
	if !v.opt || v.body == "" {
		return ""
	}
	d := v.a[:v.dashes]
	if !e.flag {
		if e.raw != "" && v.eq && strings.HasPrefix(v.value, e.raw) {
			return fmt.Sprintf("the value %s of Go flag %s starts with the denied prefix", q(v.value), w(d+v.name))
		}
		return ""
	}
	target := e.raw[e.dashes:] // name[=value]
	for k, b := range [2]string{v.body, v.test} {
		if b == "" {
			continue
		}
		n := v.name
		if k == 1 {
			n = v.testName
		}
		prefix := strings.HasPrefix(b, target)
		split := !prefix && e.eq && !v.eq && n == e.name && v.hasNext && strings.HasPrefix(v.next, e.value)
		if !prefix && !split {
			continue
		}
		how := ""
		if k == 1 {
			how = fmt.Sprintf("go test passes %s to the test binary, where it is %s", w(d+v.name), w(d+n))
		}
		if v.dashes != e.dashes {
			how = join(how, fmt.Sprintf("Go flags accept %s for %s", w(d+n), w(strings.Repeat("-", e.dashes)+n)))
		}
		if split {
			return join(how, fmt.Sprintf("Go flags take the value from the next argument: %s %s is %s",
				w(d+v.name), q(v.next), w(d+n+"="+v.next)))
		}
		if how == "" {
			how = fmt.Sprintf("Go flag %s starts with %s", w(d+n), w(e.raw))
		}
		return how
	}
	return ""
}

// getoptDeny reads an argument as a GNU getopt_long or git parse-options
// argument that is still in the options: a long option (abbreviated or not,
// with "=value" or a value in the next argument) or a cluster of short
// options (bundled, with an attached value, or a value in the next
// argument). It also returns where in the argument the match is, so that
// the earliest match in a cluster can be reported.
func getoptDeny(style Style, e *entry, v *view) (string, int) {
	a := v.a
	if !v.opt || a == "--" {
		return "", 0
	}
	who := style.who()
	if v.long {
		switch {
		case v.lname == "":
			return "", 0
		case !e.flag:
			if e.raw != "" && v.leq && strings.HasPrefix(v.lvalue, e.raw) {
				return fmt.Sprintf("the value %s of %s starts with the denied prefix", q(v.lvalue), w("--"+v.lname)), 0
			}
			return "", 0
		case !e.long:
			return "", 0 // "-c" is a short option: --cached is not it
		}
		return longDeny(who, e, e.name, "--", v.lname, v.lvalue, v.leq, v), 0
	}
	// A cluster of short options.
	if !e.flag {
		if k := strings.Index(a[2:], e.raw); e.raw != "" && k >= 0 {
			return fmt.Sprintf("%s takes the rest of a short-option cluster as an option's value: %s may give a value starting with %s", who, w(a), q(e.raw)), k + 2
		}
		return "", 0
	}
	if e.long {
		return "", 0
	}
	c := a[1:]
	if !e.eq {
		switch p := strings.Index(c, e.name); {
		case p == 0:
			return fmt.Sprintf("%s reads %s as the short option %s", who, w(a), w(e.spell(1))), 1
		case p > 0:
			return fmt.Sprintf("%s bundles short options: %s includes %s", who, w(a), w(e.spell(1))), p + 1
		}
		return "", 0
	}
	// An entry "-x=V": x with an attached value starting with V (or "=V"),
	// or x last in the cluster and V starting the next argument.
	p := -1
	for _, s := range e.attached {
		if k := strings.Index(c, s); k >= 0 && (p < 0 || k < p) {
			p = k
		}
	}
	if p >= 0 {
		return fmt.Sprintf("%s reads %s as %s with the attached value %s", who, w(a), w(e.spell(1)), q(c[p+len(e.name):])), p + 1
	}
	if strings.HasSuffix(c, e.name) && v.hasNext && strings.HasPrefix(v.next, e.value) {
		return fmt.Sprintf("%s gives %s in %s the next argument %s as its value", who, w(e.spell(1)), w(a), q(v.next)), len(c) - len(e.name) + 1
	}
	return "", 0
}

// longDeny matches a long option written as dash+name (with its value),
// whose name is compared with a long entry's name ename (e.name, or nopt's
// e.noBase): abbreviations (name is a prefix of the entry's name; without
// the option table every prefix may be a unique one) and longer names (the
// entry's name is a prefix of it) both match. An entry with "=value"
// matches when the value, attached or in the next argument, starts with the
// entry's.
func longDeny(who string, e *entry, ename, dash, name, value string, eq bool, v *view) string {
	abbrev := strings.HasPrefix(ename, name)
	longer := !abbrev && !e.eq && strings.HasPrefix(name, ename)
	if !abbrev && !longer {
		return ""
	}
	withValue, withNext := false, false
	if e.eq {
		withValue = eq && strings.HasPrefix(value, e.value)
		withNext = !eq && v.hasNext && strings.HasPrefix(v.next, e.value)
		if !withValue && !withNext {
			return ""
		}
	}
	spelled := w(dash + name)
	var how string
	switch {
	case name == ename:
		how = fmt.Sprintf("%s reads %s as the long option %s", who, spelled, w("--"+ename))
	case abbrev:
		how = fmt.Sprintf("%s accepts %s as an abbreviation of %s", who, spelled, w("--"+ename))
	default:
		how = fmt.Sprintf("%s reads %s as a long option whose name starts with %s", who, spelled, w(ename))
	}
	switch {
	case withValue:
		return fmt.Sprintf("%s, with the value %s", how, q(value))
	case withNext:
		return fmt.Sprintf("%s, taking the next argument %s as its value", how, q(v.next))
	}
	return how
}

// anyDeny is the union of every reading, for binaries of unknown style.
func anyDeny(e *entry, v *view) (string, int) {
	why, pos := goDeny(e, v), 0
	if why == "" {
		why, pos = getoptDeny(GNU, e, v)
	}
	if why == "" {
		why = noptDeny(e, v)
	}
	if why == "" {
		return "", 0
	}
	return "the binary's flag style is unknown, so every style applies: " + why, pos
}

// noptDeny reads an argument the way npm's nopt does: any number of leading
// dashes, "=value" or the next argument, abbreviations, and any number of
// "no-" prefixes (case-insensitive), each pair of which cancels out.
func noptDeny(e *entry, v *view) string {
	if !v.opt || !e.flag || v.noBase == "" || e.noBase == "" || v.noNeg != e.noNeg {
		return ""
	}
	who := "npm's option parser (nopt)"
	if v.noBase != v.name {
		who += " strips no- prefixes (two cancel out) and"
	}
	return longDeny(who, e, e.noBase, v.a[:v.dashes], v.noBase, v.value, v.eq, v)
}

// stripNo removes leading "no-" prefixes and reports whether their count is
// odd (a negation).
func stripNo(s string) (string, bool) {
	neg := false
	for len(s) >= 3 && strings.EqualFold(s[:3], "no-") {
		s = s[3:]
		neg = !neg
	}
	return s, neg
}

// join joins two parts of a reason.
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
