package gitignore

import (
	"bytes"
	"strings"
)

const (
	flagNegative  = 1 << iota // "!pattern": re-include
	flagMustBeDir             // "pattern/": directories only
	flagNoDir                 // no '/' (after dropping a trailing one): match the basename at any depth
	flagEndsWith              // "*literal": a suffix test is enough
)

// rule is one pattern line of an ignore file.
type rule struct {
	text   string // without the leading '!' and the trailing '/'
	nowild int    // length of the leading part of text without glob characters
	flags  uint8
	// base is the directory of the file the rule came from, relative to the
	// root, without a trailing slash ("" for the root, info/exclude and the
	// global file). Rules with a '/' are anchored there.
	base string
	src  string // the file, for Explain
	line int
}

// list is the rules of one file, in file order (the last match wins).
type list struct {
	rules []rule
}

// parseFile splits an ignore file into rules the way git does: an optional
// UTF-8 byte order mark is skipped; lines end at LF, with one CR before it
// dropped; empty lines and lines starting with '#' are skipped; unescaped
// trailing spaces are trimmed (not tabs); a NUL ends the line's pattern.
func parseFile(data []byte, base, src string) *list {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	l := &list{}
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		l.rules = append(l.rules, parseRule(trimTrailingSpaces(string(line)), base, src, lineNo))
	}
	return l
}

// trimTrailingSpaces drops trailing spaces unless the first of them is
// escaped with a backslash. A line ending in a lone backslash is kept whole.
func trimTrailingSpaces(s string) string {
	cut := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if cut < 0 {
				cut = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			cut = -1
		default:
			cut = -1
		}
	}
	if cut >= 0 {
		return s[:cut]
	}
	return s
}

func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

func parseRule(p, base, src string, line int) rule {
	r := rule{base: base, src: src, line: line}
	if strings.HasPrefix(p, "!") {
		r.flags |= flagNegative
		p = p[1:]
	}
	n := len(p)
	if n > 0 && p[n-1] == '/' {
		n--
		r.flags |= flagMustBeDir
	}
	if strings.IndexByte(p[:n], '/') < 0 {
		r.flags |= flagNoDir
	}
	r.nowild = min(simpleLength(p), n)
	if strings.HasPrefix(p, "*") && simpleLength(p[1:]) == len(p)-1 {
		r.flags |= flagEndsWith
	}
	r.text = p[:n]
	return r
}

// matches reports whether the rule matches path (relative to the root; its
// last component is base). Directory-only rules match directories only.
func (r *rule) matches(path, basename string, isDir bool) bool {
	if r.flags&flagMustBeDir != 0 && !isDir {
		return false
	}
	if r.flags&flagNoDir != 0 {
		switch {
		case r.nowild == len(r.text):
			return basename == r.text
		case r.flags&flagEndsWith != 0:
			return strings.HasSuffix(basename, r.text[1:])
		}
		return matchGlob(r.text, basename, false)
	}
	return r.matchPath(path)
}

// matchPath matches an anchored rule against the path below the rule's base
// directory. A literal prefix is compared first and stripped before the glob
// runs, as git does (which is what makes "foo**/bar" match "foox/y/bar").
func (r *rule) matchPath(path string) bool {
	pat, prefix := r.text, r.nowild
	if strings.HasPrefix(pat, "/") {
		pat = pat[1:]
		prefix--
	}
	name := path
	if r.base != "" {
		if len(path) <= len(r.base) || path[len(r.base)] != '/' || path[:len(r.base)] != r.base {
			return false
		}
		name = path[len(r.base)+1:]
	}
	if prefix > 0 {
		if prefix > len(name) || pat[:prefix] != name[:prefix] {
			return false
		}
		pat, name = pat[prefix:], name[prefix:]
		if pat == "" && name == "" {
			return true
		}
	}
	return matchGlob(pat, name, true)
}

// String renders the rule the way git check-ignore -v shows it.
func (r *rule) String() string {
	s := r.text
	if r.flags&flagNegative != 0 {
		s = "!" + s
	}
	if r.flags&flagMustBeDir != 0 {
		s += "/"
	}
	return s
}
