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
