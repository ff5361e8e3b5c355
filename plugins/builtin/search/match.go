package search

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
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
//
// Plain text is searched for directly, case-insensitive plain text too when
// ASCII case folding is exact for it. A regular expression that every match
// must contain some plain text in (a required literal, e.g. "Error" in
// `[A-Z][a-z]+Error`) is run only on the lines that hold that text.
func NewMatcher(pattern string, literal, caseInsensitive bool) (Matcher, error) {
	if !literal && pattern != "" && regexp.QuoteMeta(pattern) == pattern {
		literal = true // a regular expression without metacharacters
	}
	if literal && pattern == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	if literal && !caseInsensitive {
		return &literalMatcher{f: newFinder([]byte(pattern), false)}, nil
	}
	if literal && foldableASCII(pattern) {
		return &literalMatcher{f: newFinder([]byte(pattern), true)}, nil
	}
	re, err := CompileRegexp(pattern, literal, caseInsensitive)
	if err != nil {
		return nil, err
	}
	if pm := analyze(re); pm != nil {
		return pm, nil
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
// holding position i; from (at most i) is known to start a line.
func lineBounds(data []byte, from, i int) (int, int) {
	start := from + bytes.LastIndexByte(data[from:i], '\n') + 1
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

// literalMatcher finds plain text (ASCII case-folded or not).
type literalMatcher struct {
	f *finder
}

func (m *literalMatcher) FindLines(data []byte, fn func(int, []byte) bool) {
	lc := lineCounter{data: data, line: 1}
	sc := m.f.scanner(data)
	n := len(m.f.needle)
	for off := 0; off <= len(data); {
		i := sc.index(off)
		if i < 0 {
			return
		}
		start, end := lineBounds(data, off, i)
		if end < i+n { // crosses a line: the needle holds "\n"
			off = end + 1
			continue
		}
		if !fn(lc.at(start), data[start:end]) {
			return
		}
		off = end + 1
	}
}

// prefilterMatcher runs a regular expression only on the lines holding
// text every match must contain. A line matches when the expression matches
// it alone, which is what regexpMatcher's whole-content search amounts to
// (see there): (?m) makes ^ and $ match at its ends, \b sees a non-word
// character past them either way, and \A and \z mean its ends.
//
// When the expression has no assertion (^, $, \b, …: nothing looks at the
// text around a match) and cannot match empty, it runs on less than the
// line: a match lies within the run of bytes that can occur in a match
// (allowed) around one of the required text's occurrences, and starts at
// one of the bytes a match can start with (first). On a long line that is
// a few words instead of the whole line.
type prefilterMatcher struct {
	re      *regexp.Regexp
	f       *finder
	first   *[256]bool // nil with allowed: run on whole lines
	allowed *[256]bool
}

func (m *prefilterMatcher) FindLines(data []byte, fn func(int, []byte) bool) {
	lc := lineCounter{data: data, line: 1}
	sc := m.f.scanner(data)
	for off := 0; off <= len(data); {
		i := sc.index(off)
		if i < 0 {
			return
		}
		start, end := lineBounds(data, off, i)
		var ok bool
		if m.allowed != nil {
			ok = m.matchAround(data, &sc, i, start, end)
		} else {
			ok = m.re.Match(data[start:end])
		}
		if ok && !fn(lc.at(start), data[start:end]) {
			return
		}
		off = end + 1
	}
}

// matchAround reports whether the line data[start:end] matches, trying the
// run of allowed bytes around each occurrence of the required text in it,
// the first at i.
func (m *prefilterMatcher) matchAround(data []byte, sc *scan, i, start, end int) bool {
	n := len(m.f.needle)
	for i >= 0 && i+n <= end {
		s, e := i, i
		for s > start && m.allowed[data[s-1]] {
			s--
		}
		for e < end && m.allowed[data[e]] {
			e++
		}
		for s < e && !m.first[data[s]] {
			s++
		}
		if e-s >= n && m.re.Match(data[s:e]) {
			return true
		}
		i = sc.index(max(e, i+1))
	}
	return false
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
		start, end := lineBounds(data, off, s)
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
		if !foldableByte(pattern[i]) {
			return false
		}
	}
	return true
}

func foldableByte(c byte) bool {
	return c < 0x80 && c != 'k' && c != 'K' && c != 's' && c != 'S'
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

// byteRank orders bytes by their rough frequency in source code, the most
// common first; a byte not listed is rarer than every listed one. The
// finder looks for a needle's rarest byte.
const byteRank = " et\trn\niasoc,l0dfu()p./xmhg1\"=bSTy2{}E:R_4AC6IvPOw3kD8NML5FB9-7V[]*\\HUGX+;!zW&%Yq'<K`Q$j|>J#Z^?~@\r"

var rank = func() (r [256]int) {
	for i := range r {
		r[i] = len(byteRank) + 1
	}
	for i := 0; i < len(byteRank); i++ {
		r[byteRank[i]] = i
	}
	return r
}()

// finder searches for a needle, exactly or with ASCII case folding, by
// scanning for its rarest byte (memchr, or two for both cases of a letter)
// and comparing the needle around each hit.
type finder struct {
	needle []byte // lower case when fold
	fold   bool
	pivot  int  // offset of the rarest byte in needle
	b1, b2 byte // the pivot byte's cases (equal when exact or not a letter)
}

func newFinder(needle []byte, fold bool) *finder {
	f := &finder{needle: bytes.Clone(needle), fold: fold}
	if fold {
		for i, c := range f.needle {
			f.needle[i] = lowerTable[c]
		}
	}
	score := func(c byte) int { // higher: rarer
		if fold && c >= 'a' && c <= 'z' {
			return min(rank[c], rank[c-'a'+'A']) // the commoner case decides
		}
		return rank[c]
	}
	for i, c := range f.needle {
		if score(c) > score(f.needle[f.pivot]) {
			f.pivot = i
		}
	}
	f.b1, f.b2 = f.needle[f.pivot], f.needle[f.pivot]
	if fold && f.b1 >= 'a' && f.b1 <= 'z' {
		f.b2 = f.b1 - 'a' + 'A'
	}
	return f
}

// scan is one search of a finder over one content: it remembers where
// the pivot bytes were last found, so that each is looked for once.
type scan struct {
	f      *finder
	data   []byte
	n1, n2 int // next position of b1, b2 at or after the last search; len(data): none
}

func (f *finder) scanner(data []byte) scan {
	return scan{f: f, data: data, n1: -1, n2: -1}
}

// index returns the first position at or after from where the needle
// starts, or -1.
func (s *scan) index(from int) int {
	f, data := s.f, s.data
	n := len(f.needle)
	last := len(data) - n // the needle's last possible start
	for from <= last {
		// The pivot at p means a start at p-pivot.
		p := from + f.pivot
		lim := last + f.pivot + 1 // pivot positions past this cannot fit
		if s.n1 < p {
			s.n1 = nextByte(data[:lim], p, f.b1)
		}
		q := s.n1
		if f.b2 != f.b1 {
			if s.n2 < p {
				s.n2 = nextByte(data[:lim], p, f.b2)
			}
			q = min(q, s.n2)
		}
		if q >= lim {
			return -1
		}
		start := q - f.pivot
		if f.matchAt(data[start : start+n]) {
			return start
		}
		from = start + 1
	}
	return -1
}

// nextByte is the position of the first c in data at or after i, or
// len(data).
func nextByte(data []byte, i int, c byte) int {
	if i >= len(data) {
		return len(data)
	}
	j := bytes.IndexByte(data[i:], c)
	if j < 0 {
		return len(data)
	}
	return i + j
}

func (f *finder) matchAt(w []byte) bool {
	if !f.fold {
		return string(w) == string(f.needle)
	}
	for i, c := range w {
		if lowerTable[c] != f.needle[i] {
			return false
		}
	}
	return true
}

// analyze parses a compiled expression's source again and returns a
// prefilterMatcher for it, or nil when there is no text every match must
// contain. That text is the longest literal the expression requires
// (case-folded text qualifies only in stretches where ASCII folding is
// exact). For an expression without assertions that cannot match empty, it
// also sets the bytes a match can start with and those it can hold.
func analyze(re *regexp.Regexp) *prefilterMatcher {
	sre, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	sre = sre.Simplify() // x{2} is xx: one literal
	lit, fold := requiredLiteral(sre)
	if len(lit) == 0 {
		return nil
	}
	pm := &prefilterMatcher{re: re, f: newFinder(lit, fold)}
	if !hasAssertion(sre) {
		var first, allowed [256]bool
		nullable, ok := firstBytes(sre, &first)
		if ok && !nullable && allowedBytes(sre, &allowed) {
			pm.first, pm.allowed = &first, &allowed
		}
	}
	return pm
}

// requiredLiteral returns the longest text every match of re contains.
func requiredLiteral(re *syntax.Regexp) (best []byte, bestFold bool) {
	consider := func(runes []rune, fold bool) {
		b := []byte(string(runes))
		if !fold {
			if len(b) > len(best) || len(b) == len(best) && bestFold {
				best, bestFold = b, false
			}
			return
		}
		for len(b) > 0 { // the foldable stretches
			i := 0
			for i < len(b) && foldableByte(b[i]) {
				i++
			}
			if i > len(best) {
				best, bestFold = b[:i], true
			}
			for i < len(b) && !foldableByte(b[i]) {
				i++
			}
			b = b[i:]
		}
	}
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			consider(re.Rune, re.Flags&syntax.FoldCase != 0)
		case syntax.OpCapture, syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			// Adjacent literals are one text.
			var run []rune
			runFold := false
			for _, sub := range flatten(re.Sub, nil) {
				if sub.Op == syntax.OpLiteral {
					fold := sub.Flags&syntax.FoldCase != 0
					if len(run) > 0 && fold != runFold {
						consider(run, runFold)
						run = nil
					}
					run, runFold = append(run, sub.Rune...), fold
					continue
				}
				if len(run) > 0 {
					consider(run, runFold)
					run = nil
				}
				walk(sub)
			}
			if len(run) > 0 {
				consider(run, runFold)
			}
		}
	}
	walk(re)
	return best, bestFold
}

// flatten lists the parts of a concatenation, those of nested
// concatenations (as from Simplify) and of groups included.
func flatten(subs, out []*syntax.Regexp) []*syntax.Regexp {
	for _, sub := range subs {
		for sub.Op == syntax.OpCapture {
			sub = sub.Sub[0]
		}
		if sub.Op == syntax.OpConcat {
			out = flatten(sub.Sub, out)
		} else {
			out = append(out, sub)
		}
	}
	return out
}

// hasAssertion reports whether re holds an empty-width assertion.
func hasAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if hasAssertion(sub) {
			return true
		}
	}
	return false
}

// addRune adds to set the bytes that begin r in UTF-8: r itself for ASCII,
// else every byte from 0x80 (its first byte, or an invalid byte, which Go's
// regexp reads as U+FFFD).
func addRune(set *[256]bool, r rune) {
	if r < utf8.RuneSelf {
		set[r] = true
		return
	}
	for b := 0x80; b < 0x100; b++ {
		set[b] = true
	}
}

// allowedBytes adds to set every byte a match of re can hold, and reports
// whether it knows them. Runes past ASCII add every byte from 0x80, as in
// firstBytes.
func allowedBytes(re *syntax.Regexp, set *[256]bool) bool {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch:
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			addRune(set, r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					addRune(set, f)
				}
			}
		}
		return true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				set[r] = true
			}
			if hi >= utf8.RuneSelf {
				addRune(set, hi)
			}
		}
		return true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		for b := range set {
			set[b] = set[b] || b != '\n' || re.Op == syntax.OpAnyChar
		}
		return true
	case syntax.OpCapture, syntax.OpPlus, syntax.OpStar, syntax.OpQuest, syntax.OpRepeat, syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !allowedBytes(sub, set) {
				return false
			}
		}
		return true
	}
	return false
}

// firstBytes adds to set the bytes a match of re can start with, and
// reports whether re can match empty; ok is false for what it does not
// know. Runes past ASCII add every byte from 0x80 (their first byte, or an
// invalid byte, which Go's regexp reads as U+FFFD).
func firstBytes(re *syntax.Regexp, set *[256]bool) (nullable, ok bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return false, true
	case syntax.OpEmptyMatch:
		return true, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true, true
		}
		r := re.Rune[0]
		addRune(set, r)
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				addRune(set, f)
			}
		}
		return false, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				set[r] = true
			}
			if hi >= utf8.RuneSelf {
				addRune(set, hi)
			}
		}
		return false, true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		for b := range set {
			set[b] = true
		}
		set['\n'] = re.Op == syntax.OpAnyChar
		return false, true
	case syntax.OpCapture, syntax.OpPlus:
		return firstBytes(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		_, ok := firstBytes(re.Sub[0], set)
		return true, ok
	case syntax.OpRepeat:
		nullable, ok := firstBytes(re.Sub[0], set)
		return nullable || re.Min == 0, ok
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			nullable, ok := firstBytes(sub, set)
			if !ok {
				return false, false
			}
			if !nullable {
				return false, true
			}
		}
		return true, true
	case syntax.OpAlternate:
		any := false
		for _, sub := range re.Sub {
			nullable, ok := firstBytes(sub, set)
			if !ok {
				return false, false
			}
			any = any || nullable
		}
		return any, true
	}
	return false, false
}
