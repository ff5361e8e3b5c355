package gitignore

import "strings"

// This file matches one ignore pattern against one name with the glob rules
// git uses for ignore files (its "wildmatch" semantics), byte by byte and
// case-sensitively:
//
//   - `\x` matches x; a lone trailing `\` matches nothing.
//   - `?` matches one byte other than '/'.
//   - `[...]` matches one byte other than '/': `!` or `^` first negates, `]`
//     first is literal, `a-z` is a range (ends may be escaped), `[:alpha:]`
//     and the other POSIX names use git's locale-free ASCII tables; an
//     unterminated set or an unknown class name matches nothing.
//   - `*` matches any run of bytes without '/'.
//   - `**` is special only when it is a whole path component (at the start of
//     the pattern or after '/', and at the end or before '/' or `\/`): then it
//     matches across '/', and `**/` may match no directory at all. Elsewhere
//     it is a plain `*`.
//
// Note that "the start of the pattern" is the start of the string handed to
// matchGlob: callers that strip a literal prefix first (as git does) get
// git's behaviour for patterns such as "foo**/bar".

// outcome of one matching attempt. Besides match and no match, two outcomes
// prune the search: the text ran out (no later split can help), or a single
// star met a '/' (only an enclosing `**` may still move on).
type outcome int8

const (
	matched outcome = iota
	noMatch
	abortAll
	abortToStarStar
)

// matchGlob reports whether text matches pattern. In pathname mode '/' is
// only matched by a literal '/' or by `**`; git matches basenames without
// it, which makes no difference since a basename holds no '/'.
func matchGlob(pattern, text string, pathname bool) bool {
	return glob(pattern, text, pathname) == matched
}

func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

func glob(p, t string, pathname bool) outcome {
	pi, ti := 0, 0
	for pi < len(p) {
		pc := p[pi]
		tc := byteAt(t, ti)
		if ti >= len(t) && pc != '*' {
			return abortAll
		}
		switch pc {
		case '?':
			if pathname && tc == '/' {
				return noMatch
			}
		case '[':
			next, res := matchSet(p, pi+1, tc, pathname)
			if res != matched {
				return res
			}
			pi = next
		case '*':
			return star(p, pi, t, ti, pathname)
		default:
			if pc == '\\' {
				pi++
				pc = byteAt(p, pi)
			}
			if tc != pc {
				return noMatch
			}
		}
		pi++
		ti++
	}
	if ti < len(t) {
		return noMatch
	}
	return matched
}

// star handles the run of '*' at p[pi] against t[ti:].
func star(p string, pi int, t string, ti int, pathname bool) outcome {
	start := pi
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	crossSlash := !pathname
	if pathname && pi-start >= 2 {
		before := start == 0 || p[start-1] == '/'
		after := pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && byteAt(p, pi+1) == '/')
		if before && after {
			// "**/" first tries to match no directory at all.
			if pi < len(p) && p[pi] == '/' && glob(p[pi+1:], t[ti:], pathname) == matched {
				return matched
			}
			crossSlash = true
		}
	}
	rest := p[pi:]
	if rest == "" {
		if !crossSlash && strings.IndexByte(t[ti:], '/') >= 0 {
			return noMatch
		}
		return matched
	}
	if !crossSlash && rest[0] == '/' {
		// One star before a slash spans exactly the current component.
		k := strings.IndexByte(t[ti:], '/')
		if k < 0 {
			return noMatch
		}
		return glob(rest[1:], t[ti+k+1:], pathname)
	}
	for ti < len(t) {
		if lit := rest[0]; !isGlobSpecial(lit) {
			// Skip ahead to the next occurrence of the literal that
			// follows the star (not past a '/' unless the star may).
			for ti < len(t) && t[ti] != lit && (crossSlash || t[ti] != '/') {
				ti++
			}
			if ti >= len(t) || t[ti] != lit {
				return noMatch
			}
		}
		res := glob(rest, t[ti:], pathname)
		if res != noMatch {
			if !crossSlash || res != abortToStarStar {
				return res
			}
		} else if !crossSlash && t[ti] == '/' {
			return abortToStarStar
		}
		ti++
	}
	return abortAll
}

// matchSet matches the byte c against the bracket expression whose body
// starts at p[i] (just after '['). It returns the index of the closing ']'
// and matched or a failure outcome.
func matchSet(p string, i int, c byte, pathname bool) (int, outcome) {
	negate := false
	if ch := byteAt(p, i); ch == '!' || ch == '^' {
		negate = true
		i++
	}
	found := false
	var prev byte // previous single byte, 0 after a range or class
	for first := true; first || byteAt(p, i) != ']'; first = false {
		ch := byteAt(p, i)
		if i >= len(p) {
			return i, abortAll
		}
		switch {
		case ch == '\\':
			i++
			if i >= len(p) {
				return i, abortAll
			}
			ch = p[i]
			if c == ch {
				found = true
			}
			prev = ch
		case ch == '-' && prev != 0 && i+1 < len(p) && p[i+1] != ']':
			i++
			hi := p[i]
			if hi == '\\' {
				i++
				if i >= len(p) {
					return i, abortAll
				}
				hi = p[i]
			}
			if c >= prev && c <= hi {
				found = true
			}
			prev = 0
		case ch == '[' && byteAt(p, i+1) == ':':
			end := strings.IndexByte(p[i+2:], ']')
			if end < 0 {
				return len(p), abortAll
			}
			name := p[i+2 : i+2+end]
			if !strings.HasSuffix(name, ":") {
				// Not "[:name:]": the '[' is an ordinary member.
				if c == '[' {
					found = true
				}
				prev = '['
				break
			}
			in, known := inClass(strings.TrimSuffix(name, ":"), c)
			if !known {
				return i, abortAll
			}
			if in {
				found = true
			}
			i += 2 + end
			prev = 0
		default:
			if c == ch {
				found = true
			}
			prev = ch
		}
		i++
	}
	if found == negate || (pathname && c == '/') {
		return i, noMatch
	}
	return i, matched
}

// inClass tests c against a POSIX class with git's ASCII-only tables (its
// isspace, for one, is only tab, LF, CR and space).
func inClass(name string, c byte) (in, known bool) {
	isDigit := c >= '0' && c <= '9'
	isUpper := c >= 'A' && c <= 'Z'
	isLower := c >= 'a' && c <= 'z'
	isPunct := (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) ||
		(c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e)
	switch name {
	case "alnum":
		return isDigit || isUpper || isLower, true
	case "alpha":
		return isUpper || isLower, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return c >= 0x21 && c <= 0x7e, true
	case "lower":
		return isLower, true
	case "print":
		return c >= 0x20 && c <= 0x7e, true
	case "punct":
		return isPunct, true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
