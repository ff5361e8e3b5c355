package gitignore

import "testing"

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          bool
	}{
		{"foo", "foo", true},
		{"foo", "fo", false},
		{"f?o", "f/o", false},
		{"f*", "foo/bar", false},
		{"*/bar", "foo/bar", true},
		{"*/bar", "a/foo/bar", false},
		{"**/bar", "bar", true},
		{"**/bar", "a/b/bar", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**", "a/x/y", true},
		{"a/**", "a", false},
		{"a**", "ab/c", false}, // glued ** is a plain *
		{"**a", "x/a", false},  // glued ** is a plain *
		{"**", "x/y/z", true},  // whole-pattern **
		{"a/**\\/b", "a/x/b", true},
		{"a/**\\/b", "a/b", false}, // "**\/" never matches zero directories
		{"[ab]c", "bc", true},
		{"[!ab]c", "bc", false},
		{"[^ab]c", "cc", true},
		{"[]]", "]", true},
		{"[!]]", "a", true},
		{"[a-]", "-", true},
		{"[\\]]", "]", true},
		{"[[:digit:]x]", "7", true},
		{"[[:space:]]", "\v", false}, // git's isspace has no VT
		{"[[:bogus:]]", "b", false},
		{"[![:bogus:]]", "b", false}, // an unknown class never matches
		{"[ab", "a", false},          // unterminated set
		{"[/]", "/", false},
		{"[!a]", "/", false},
		{"\\*", "*", true},
		{"\\*", "x", false},
		{"a\\", "a", false},
		{"*.txt", ".txt", true},
		{"x*y*z", "xaybz", true},
		{"x*y*z", "xay/bz", false},
	}
	for _, c := range cases {
		if got := matchGlob(c.pattern, c.text, true); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
}

func TestRuleLiteralPrefixQuirk(t *testing.T) {
	// git compares the literal prefix, strips it, and globs the rest: the
	// ** in "foo**/bar" then starts the remaining pattern and spans
	// directories, although "foo**" elsewhere is a plain *.
	r := parseRule("foo**/bar", "", "", 1)
	if !r.matchPath("foox/y/bar") {
		t.Error(`"foo**/bar" should match "foox/y/bar" as in git`)
	}
	r = parseRule("?oo**/bar", "", "", 1)
	if r.matchPath("foox/y/bar") {
		t.Error(`"?oo**/bar" should not match "foox/y/bar"`)
	}
}

func BenchmarkIgnoredDeep(b *testing.B) {
	l := parseFile([]byte("*.o\n/build/\nnode_modules/\n**/tmp/**\n!keep.o\n*.log\ndocs/**/*.pdf\n"), "", ".gitignore")
	m := &Matcher{dirs: map[string]*list{"": l}}
	for _, d := range []string{"src", "src/pkg", "src/pkg/sub", "src/pkg/sub/deep"} {
		m.dirs[d] = nil
	}
	for b.Loop() {
		m.Ignored("src/pkg/sub/deep/file.go", false)
	}
}
