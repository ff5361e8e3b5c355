package search

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Matcher finds the lines of a file's content that match a pattern. Lines
// are separated by "\n"; a match never spans lines (as with grep and rg). A
// "\r" before the "\n" is part of the line.
type Matcher interface {
	// FindLines calls fn for each matching line in order, with its 1-based
	// number and its text without the "\n"; it stops when fn returns false.
	FindLines(data []byte, fn func(line int, text []byte) bool)
}

// NewMatcher compiles a pattern: Go regexp syntax, or plain text when
// literal is set. In a regular expression ^ and $ match at line boundaries.
func NewMatcher(pattern string, literal, caseInsensitive bool) (Matcher, error) {
	if !literal && pattern != "" && regexp.QuoteMeta(pattern) == pattern {
		literal = true // a regular expression without metacharacters
	}
	if literal && pattern == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	if literal && !caseInsensitive {
		return &literalMatcher{needle: []byte(pattern)}, nil
	}
	if literal && foldableASCII(pattern) {
		return &foldMatcher{needle: []byte(strings.ToLower(pattern))}, nil
	}
	re, err := CompileRegexp(pattern, literal, caseInsensitive)
	if err != nil {
		return nil, err
	}
	return &regexpMatcher{re: re, strict: strings.Contains(pattern, `\A`) || strings.Contains(pattern, `\z`)}, nil
}

// CompileRegexp compiles a pattern the way the search and replace tools
// read it: multi-line mode (^ and $ at line boundaries), optionally case
// insensitive, and quoted when literal.
func CompileRegexp(pattern string, literal, caseInsensitive bool) (*regexp.Regexp, error) {
	if literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	flags := "(?m)"
	if caseInsensitive {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		// Report the error against the pattern the model wrote.
		if _, err2 := regexp.Compile(pattern); err2 != nil {
			return nil, err2
		}
		return nil, err
	}
	return re, nil
}

// lineBounds returns the start and end (exclusive, before "\n") of the line
// holding position i.
func lineBounds(data []byte, i int) (int, int) {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	end := bytes.IndexByte(data[i:], '\n')
	if end < 0 {
		end = len(data)
	} else {
		end += i
	}
	return start, end
}

// lineCounter turns byte positions, in increasing order, into line numbers.
type lineCounter struct {
	data []byte
	pos  int // counted up to here
	line int // 1-based line number at pos
}

func (c *lineCounter) at(i int) int {
	c.line += bytes.Count(c.data[c.pos:i], []byte{'\n'})
	c.pos = i
	return c.line
}

type literalMatcher struct {
	needle []byte
}

func (m *literalMatcher) FindLines(data []byte, fn func(int, []byte) bool) {
	lc := lineCounter{data: data, line: 1}
	for off := 0; off <= len(data); {
		i := bytes.Index(data[off:], m.needle)
		if i < 0 {
			return
		}
		i += off
		start, end := lineBounds(data, i)
		if end < i+len(m.needle) { // crosses a line: the needle holds "\n"
			off = end + 1
			continue
		}
		if !fn(lc.at(start), data[start:end]) {
			return
		}
		off = end + 1
	}
}

type regexpMatcher struct {
	re *regexp.Regexp
	// strict: the pattern uses \A or \z, which mean something else on the
	// whole content than on one line; every line is then tried alone.
	strict bool
}

func (m *regexpMatcher) FindLines(data []byte, fn func(int, []byte) bool) {
	if len(data) == 0 {
		return // no lines
	}
	if m.strict {
		line := 1
		for off := 0; off < len(data); line++ {
			end := bytes.IndexByte(data[off:], '\n')
			if end < 0 {
				end = len(data)
			} else {
				end += off
			}
			if m.re.Match(data[off:end]) && !fn(line, data[off:end]) {
				return
			}
			off = end + 1
		}
		return
	}
	lc := lineCounter{data: data, line: 1}
	for off := 0; off <= len(data); {
		loc := m.re.FindIndex(data[off:])
		if loc == nil {
			return
		}
		s, e := loc[0]+off, loc[1]+off
		start, end := lineBounds(data, s)
		if s == len(data) && start == len(data) {
			return // an empty match after the final "\n" is no line
		}
		// A match that runs past its line (e.g. \s+ eating the "\n") counts
		// only if the line matches on its own.
		if e <= end || m.re.Match(data[start:end]) {
			if !fn(lc.at(start), data[start:end]) {
				return
			}
		}
		off = end + 1
	}
}

// foldableASCII reports whether ASCII case folding of pattern is exactly
// Unicode simple case folding: the pattern is ASCII and holds no k or s
// (which also fold to the Kelvin sign and the long s).
func foldableASCII(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c >= 0x80, c == 'k', c == 'K', c == 's', c == 'S':
			return false
		}
	}
	return true
}

var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

var foldBufs = sync.Pool{New: func() any { return new([]byte) }}

// foldMatcher is a case-insensitive literal for ASCII needles: it searches
// an ASCII-lowered copy of the content, whose offsets are the content's.
type foldMatcher struct {
	needle []byte // lower case
}

func (m *foldMatcher) FindLines(data []byte, fn func(int, []byte) bool) {
	bp := foldBufs.Get().(*[]byte)
	defer foldBufs.Put(bp)
	if cap(*bp) < len(data) {
		*bp = make([]byte, len(data))
	}
	low := (*bp)[:len(data)]
	for i, c := range data {
		low[i] = lowerTable[c]
	}
	lc := lineCounter{data: data, line: 1}
	for off := 0; off <= len(data); {
		i := bytes.Index(low[off:], m.needle)
		if i < 0 {
			return
		}
		i += off
		start, end := lineBounds(data, i)
		if end < i+len(m.needle) {
			off = end + 1
			continue
		}
		if !fn(lc.at(start), data[start:end]) {
			return
		}
		off = end + 1
	}
}
