package search

import (
	"bytes"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

type hit struct {
	line int
	text string
}

func find(m Matcher, data string) []hit {
	var out []hit
	m.FindLines([]byte(data), func(line int, text []byte) bool {
		out = append(out, hit{line, string(text)})
		return true
	})
	return out
}

// reference matches line by line, the obvious way.
func reference(re *regexp.Regexp, data string) []hit {
	var out []hit
	if data == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for i, l := range lines {
		if re.MatchString(l) {
			out = append(out, hit{i + 1, l})
		}
	}
	return out
}

func TestMatcherCases(t *testing.T) {
	tests := []struct {
		pattern     string
		literal, ci bool
		data        string
		want        []hit
	}{
		{"foo", true, false, "a\nfoo\nbfoo foo\n", []hit{{2, "foo"}, {3, "bfoo foo"}}},
		{"FOO", true, true, "a\nfoo\nFoO\n", []hit{{2, "foo"}, {3, "FoO"}}},
		{"a.c", true, false, "abc\na.c\n", []hit{{2, "a.c"}}},
		{"a.c", false, false, "abc\na.c\n", []hit{{1, "abc"}, {2, "a.c"}}},
		{`^x`, false, false, "x\nax\nxx", []hit{{1, "x"}, {3, "xx"}}},
		{`x$`, false, false, "x\nxa\nax\n", []hit{{1, "x"}, {3, "ax"}}},
		{`a\s+b`, false, false, "a\nb\na  b\n", []hit{{3, "a  b"}}},
		{`\Afoo`, false, false, "foo\nfoo\n", []hit{{1, "foo"}, {2, "foo"}}},
		{`x*`, false, false, "a\nb\n", []hit{{1, "a"}, {2, "b"}}},
		{`x*`, false, false, "", nil},
		{"a\nb", true, false, "a\nb\n", nil},
		{`b`, false, false, "a\r\nb\r\n", []hit{{2, "b\r"}}},
		{`é`, false, true, "É\n", []hit{{1, "É"}}},
		{"Deadline", false, true, "a deadline\nDEADLINE!\nnone\n", []hit{{1, "a deadline"}, {2, "DEADLINE!"}}},
		{"k", true, true, "\u212a\nK\n", []hit{{1, "\u212a"}, {2, "K"}}},
		{"(x", true, true, "(X\n", []hit{{1, "(X"}}},
	}
	for _, tt := range tests {
		m, err := NewMatcher(tt.pattern, tt.literal, tt.ci)
		if err != nil {
			t.Fatal(err)
		}
		got := find(m, tt.data)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%q lit=%v ci=%v on %q: got %v want %v", tt.pattern, tt.literal, tt.ci, tt.data, got, tt.want)
		}
	}
	if _, err := NewMatcher("(", false, false); err == nil || strings.Contains(err.Error(), "(?m)") {
		t.Errorf("error %v", err)
	}
}

// TestMatcherRandom compares the whole-buffer matchers with line-by-line
// matching on random texts and patterns.
func TestMatcherRandom(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	alphabet := "ab \n\t"
	patterns := []string{`a`, `ab`, `a b`, `^a`, `b$`, `a\s*b`, `\s`, `[^a]`, `a|b\n?`, `^$`, `(?i)A`, `\bab\b`, `a.*b`, `^\s*$`, `b\s`}
	for i := 0; i < 3000; i++ {
		n := r.Intn(40)
		var sb bytes.Buffer
		for j := 0; j < n; j++ {
			sb.WriteByte(alphabet[r.Intn(len(alphabet))])
		}
		data := sb.String()
		p := patterns[r.Intn(len(patterns))]
		m, err := NewMatcher(p, false, false)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile("(?m)" + p)
		if got, want := find(m, data), reference(re, data); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q on %q: got %v want %v", p, data, got, want)
		}
		// Case-insensitive literal, against the regexp.
		fl := []string{"A", "aB", "b A", " a"}[r.Intn(4)]
		fm, _ := NewMatcher(fl, true, true)
		if got, want := find(fm, strings.ToUpper(data[:len(data)/2])+data[len(data)/2:]), reference(regexp.MustCompile("(?i)"+regexp.QuoteMeta(fl)), strings.ToUpper(data[:len(data)/2])+data[len(data)/2:]); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("folded %q on %q: got %v want %v", fl, data, got, want)
		}
		// Literal.
		lit := []string{"a", "ab", "b a", " "}[r.Intn(4)]
		lm, _ := NewMatcher(lit, true, false)
		if got, want := find(lm, data), reference(regexp.MustCompile(regexp.QuoteMeta(lit)), data); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("literal %q on %q: got %v want %v", lit, data, got, want)
		}
	}
}

func TestMatcherStop(t *testing.T) {
	m, _ := NewMatcher("x", true, false)
	n := 0
	m.FindLines([]byte("x\nx\nx\n"), func(int, []byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("called %d times", n)
	}
}

// TestAnalyze: the required literal, the first-byte set and the allowed
// bytes.
func TestAnalyze(t *testing.T) {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	tests := []struct {
		pattern        string
		lit            string // "" none
		fold           bool
		first, allowed string // the bytes a match starts with, holds; "-": not computed
	}{
		{`[A-Z][a-z]+Error`, "Error", false, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", letters},
		{`func \w+\(`, "func ", false, "f", " (0123456789" + letters[:26] + "_" + letters[26:]},
		{`^import \(`, "import (", false, "-", "-"},
		{`(?i)deadline exceeded`, "deadline exceeded", true, "Dd", " ACDEILNXacdeilnx"},
		{`(?i)task`, "ta", true, "Tt", "-"}, // the Kelvin sign and the long s: every byte from 0x80
		{`a|b`, "", false, "-", "-"},
		{`x*foo`, "foo", false, "fx", "fox"},
		{`(ab)+c?d{2,3}`, "ab", false, "a", "abcd"},
		{`(a)(bc)d`, "abcd", false, "a", "abcd"},
		{`a{2}b`, "aab", false, "a", "ab"},
		{`\bword\b`, "word", false, "-", "-"},
		{`foo|foobar`, "foo", false, "f", "abfor"},
		{`.*x`, "x", false, "-", "-"}, // nullable start: matches whole lines
		{`x.`, "x", false, "x", "-"},  // every byte but "\n"
	}
	set := func(s *[256]bool) string {
		if s == nil {
			return "-"
		}
		var b []byte
		for c := 0; c < 256; c++ {
			if s[c] {
				b = append(b, byte(c))
			}
		}
		if len(b) > 128 {
			return "-"
		}
		return string(b)
	}
	for _, tt := range tests {
		re, err := CompileRegexp(tt.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		pm := analyze(re)
		if tt.lit == "" {
			if pm != nil {
				t.Errorf("%q: literal %q", tt.pattern, pm.f.needle)
			}
			continue
		}
		if pm == nil || string(pm.f.needle) != tt.lit || pm.f.fold != tt.fold {
			t.Errorf("%q: %+v, want %q fold %v", tt.pattern, pm, tt.lit, tt.fold)
			continue
		}
		if got := set(pm.first); tt.first != "-" && got != tt.first {
			t.Errorf("%q: first bytes %q, want %q", tt.pattern, got, tt.first)
		}
		if got := set(pm.allowed); got != tt.allowed {
			t.Errorf("%q: allowed bytes %q, want %q", tt.pattern, got, tt.allowed)
		}
	}
}

// TestPrefilterRandom compares the matchers NewMatcher picks (prefiltered
// by a required literal, or plain text) with line-by-line matching, on
// random texts and patterns.
func TestPrefilterRandom(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	atoms := []string{"a", "b", "ab", "Ab", "K", "\u212a", "é", "É", " ", "\t", "\n", "\r\n", "x", "_", "\xff"}
	patterns := []string{
		`ab`, `a+b`, `[A-Z]b`, `[a-z]+b`, `\bab\b`, `^ab`, `ab$`, `^\s*ab`, `a.b`, `(?i)ab`, `(?i)kab`,
		`x|ab`, `(ab)+x?`, `[^a]ab`, `é+b`, `(?i)éb`, `\w+ab`, `ab\s+x`, `a\nb`, `(?i)k`, `\Aab`, `ab\z`,
		`[\x{80}-\x{10FFFF}]ab`, `.ab`, `ab.*x`, `_*ab_`, `(?:a|\xff)b`, `\Bab`, `a{2}b`, `(?i)ÉB`,
		`[a-z]+Ab`, `b[ \t]+a`, `(?i)a+b`, `x?ab`, `[A-Z][a-z]+b`, `(a|x)+b`, `ab[^x]`, `\pL+ab`,
	}
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := r.Intn(30); n > 0; n-- {
			sb.WriteString(atoms[r.Intn(len(atoms))])
		}
		data := sb.String()
		p := patterns[r.Intn(len(patterns))]
		m, err := NewMatcher(p, false, false)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile("(?m)" + p)
		if got, want := find(m, data), reference(re, data); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q (%T) on %q: got %v want %v", p, m, data, got, want)
		}
		lit := atoms[r.Intn(len(atoms)-1)] + atoms[r.Intn(len(atoms)-1)] // not "\xff": patterns are UTF-8
		for _, ci := range []bool{false, true} {
			lm, _ := NewMatcher(lit, true, ci)
			flags := ""
			if ci {
				flags = "(?i)"
			}
			if got, want := find(lm, data), reference(regexp.MustCompile(flags+regexp.QuoteMeta(lit)), data); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("literal %q ci=%v (%T) on %q: got %v want %v", lit, ci, lm, data, got, want)
			}
		}
	}
}
