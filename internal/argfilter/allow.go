package argfilter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// shortAllow is what allowArgs admits for one short option letter under GNU
// and Git: "-x" admits it as a boolean (bundled only with other admitted
// letters); "-x=" admits it with any attached value, "-x=V" with an
// attached value starting with V.
type shortAllow struct {
	boolean bool
	values  []string // value prefixes; "" admits any value
}

// checkAllow applies allowArgs: every argument must be admitted.
func checkAllow(style Style, allow []string, args []string) *Rejection {
	entries := parseEntries(allow)
	shorts := map[string]*shortAllow{}
	for _, e := range entries {
		if !e.flag || e.long {
			continue
		}
		s := shorts[e.name]
		if s == nil {
			s = &shortAllow{}
			shorts[e.name] = s
		}
		if e.eq {
			s.values = append(s.values, e.value)
		} else {
			s.boolean = true
		}
	}
	for i, a := range args {
		var why string
		switch style {
		case Go:
			why = goAdmit(entries, a)
		case GNU, Git:
			why = getoptAdmit(style, entries, shorts, a)
		default:
			why = goAdmit(entries, a)
			if why == "" {
				why = getoptAdmit(GNU, entries, shorts, a)
			}
			if why != "" {
				why = "the binary's flag style is unknown, so every style must admit it: " + why
			}
		}
		if why != "" {
			near := ""
			for _, e := range entries {
				if e.raw != "" && strings.HasPrefix(a, e.raw) {
					near = e.raw
					break
				}
			}
			return &Rejection{Index: i, Arg: a, Prefix: near, List: AllowList, Reason: why}
		}
	}
	return nil
}

// plainAdmit handles what every style shares: an argument equal to an entry
// is admitted, and an argument that is not an option is admitted by a
// non-flag entry it starts with. It reports whether it decided, and how.
func plainAdmit(entries []entry, a string) (decided, ok bool) {
	for _, e := range entries {
		if a == e.raw {
			return true, true
		}
	}
	if len(a) >= 2 && a[0] == '-' {
		return false, false
	}
	for _, e := range entries {
		if e.dashes == 0 && e.raw != "" && strings.HasPrefix(a, e.raw) {
			return true, true
		}
	}
	return true, false
}

// goAdmit returns "" if a Go-style binary may see a: a flag -name or
// --name, with an optional =value, admitted by an entry of the same name
// (an entry "-name=V" requires a value starting with V).
func goAdmit(entries []entry, a string) string {
	if decided, ok := plainAdmit(entries, a); decided {
		if ok {
			return ""
		}
		return "no allowArgs entry admits it"
	}
	body := a[1:]
	if body[0] == '-' {
		body = body[1:]
	}
	if body == "" || body[0] == '-' || body[0] == '=' {
		return fmt.Sprintf("%s is not a Go flag that allowArgs names", w(a))
	}
	name, value, eq := strings.Cut(body, "=")
	for _, e := range entries {
		if e.flag && name == e.name && (!e.eq || eq && strings.HasPrefix(value, e.value)) {
			return ""
		}
	}
	flag := a[:len(a)-len(body)] + name
	return fmt.Sprintf("Go flag %s is not named by allowArgs; a flag entry admits only that flag, as -name, --name, -name=value or --name=value", w(flag))
}

// getoptAdmit returns "" if a GNU or git binary may see a: a long option
// --name[=value] named exactly by an entry (abbreviations are not
// admitted: they could stand for another option), "-name=value" for an
// entry "-name=", or a cluster of short options each of which is admitted.
func getoptAdmit(style Style, entries []entry, shorts map[string]*shortAllow, a string) string {
	who := style.who()
	if decided, ok := plainAdmit(entries, a); decided {
		if ok {
			return ""
		}
		return "no allowArgs entry admits it"
	}
	if a == "--" {
		return `"--" is admitted only by an allowArgs entry "--"`
	}
	if a[1] == '-' {
		name, value, eq := strings.Cut(a[2:], "=")
		for _, e := range entries {
			if e.flag && e.long && name == e.name && (!e.eq || eq && strings.HasPrefix(value, e.value)) {
				return ""
			}
		}
		return fmt.Sprintf("%s reads %s as the long option %s or an abbreviation of another, which allowArgs does not name exactly", who, w(a), w("--"+name))
	}
	for _, e := range entries {
		if e.flag && e.long && e.dashes == 1 && e.eq && strings.HasPrefix(a, e.raw) {
			return ""
		}
	}
	c := a[1:]
	for p := 0; p < len(c); {
		_, size := utf8.DecodeRuneInString(c[p:])
		l := c[p : p+size]
		s := shorts[l]
		if s == nil {
			if p == 0 {
				return fmt.Sprintf("%s reads %s as the short option %s, which allowArgs does not name", who, w(a), w("-"+l))
			}
			return fmt.Sprintf("%s bundles short options: %s includes %s, which allowArgs does not name", who, w(a), w("-"+l))
		}
		p += size
		rest := c[p:]
		if len(s.values) > 0 {
			if rest == "" {
				return ""
			}
			for _, v := range s.values {
				if strings.HasPrefix(rest, v) || strings.HasPrefix(strings.TrimPrefix(rest, "="), v) {
					return ""
				}
			}
		}
		if !s.boolean {
			return fmt.Sprintf("%s gives %s in %s the value %s, which allowArgs does not admit", who, w("-"+l), w(a), q(rest))
		}
	}
	return ""
}
