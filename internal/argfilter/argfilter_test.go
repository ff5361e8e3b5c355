package argfilter

import (
	"fmt"
	"strings"
	"testing"
)

// row is one argument list and the expected outcome. For a denial, prefix
// is the list entry that must be named and index the argument.
type row struct {
	args   []string
	denied bool
	prefix string
	index  int
}

func ok(args ...string) row { return row{args: args} }

// no expects args to be rejected at index by prefix.
func no(prefix string, index int, args ...string) row {
	return row{args: args, denied: true, prefix: prefix, index: index}
}

// spelling is one sub-table: every row uses one way of writing arguments.
type spelling struct {
	name string
	rows []row
}

type suite struct {
	name        string
	style       Style
	allow, deny []string
	spellings   []spelling
}

func runSuites(t *testing.T, suites []suite) {
	t.Helper()
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			for _, sp := range s.spellings {
				t.Run(sp.name, func(t *testing.T) {
					for _, r := range sp.rows {
						checkRow(t, s, r)
					}
				})
			}
		})
	}
}

func checkRow(t *testing.T, s suite, r row) {
	t.Helper()
	rej := Check(s.style, s.allow, s.deny, r.args)
	if !r.denied {
		if rej != nil {
			t.Errorf("%s %q: want allowed, got %v", s.style, r.args, rej)
		}
		return
	}
	if rej == nil {
		t.Errorf("%s %q: want denied by %q, got allowed", s.style, r.args, r.prefix)
		return
	}
	list := DenyList
	if len(s.deny) == 0 {
		list = AllowList
	}
	if rej.List != list || rej.Prefix != r.prefix || rej.Index != r.index || rej.Arg != r.args[r.index] || rej.Reason == "" {
		t.Errorf("%s %q: got %+v, want list %s prefix %q index %d", s.style, r.args, *rej, list, r.prefix, r.index)
	}
	msg := rej.Error()
	for _, want := range []string{fmt.Sprintf("argument %d %q", r.index, r.args[r.index]), list} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s %q: message %q does not contain %q", s.style, r.args, msg, want)
		}
	}
	if r.prefix != "" && !strings.Contains(msg, fmt.Sprintf("prefix %q", r.prefix)) {
		t.Errorf("%s %q: message %q does not name prefix %q", s.style, r.args, msg, r.prefix)
	}
}

var (
	goDenyList   = []string{"-exec", "-toolexec", "-o", "-coverprofile", "-mod=mod"}
	gnuDenyList  = []string{"-i", "--in-place", "--checkpoint-action", "-e", "-f", "--to-command"}
	gitDenyList  = []string{"-c", "--config-env", "--exec-path", "--upload-pack", "--output", "--ext-diff", "--textconv", "-O", "--open-files-in-pager", "--no-index", "/", ".."}
	pathDenyList = []string{"-w", "/", ".."}
)

func TestDenyGo(t *testing.T) {
	runSuites(t, []suite{{
		name: "go test", style: Go, deny: goDenyList,
		spellings: []spelling{
			{"plain prefix", []row{
				no("-exec", 0, "-exec=x"),
				no("-toolexec", 0, "-toolexec=/tmp/x"),
				no("-o", 0, "-o"),
				no("-o", 0, "-outputdir=/tmp"),
				no("-mod=mod", 0, "-mod=mod"),
				no("-mod=mod", 0, "-mod=modx"),
			}},
			{"double dash", []row{
				no("-exec", 0, "--exec=x"),
				no("-coverprofile", 0, "--coverprofile=c.out"),
				no("-o", 0, "--outputdir=/tmp"),
				no("-mod=mod", 0, "--mod=mod"),
				no("-exec", 0, "---exec=x"),
			}},
			{"split value", []row{
				no("-exec", 0, "-exec", "x"),
				no("-exec", 0, "--exec", "x"),
				no("-mod=mod", 0, "-mod", "mod"),
				no("-mod=mod", 0, "--mod", "mod"),
				ok("-mod", "readonly"),
				ok("-modx", "mod"),
			}},
			{"after positional", []row{
				no("-exec", 1, "./...", "-exec=x"),
				no("-exec", 2, "./...", "-v", "--exec=x"),
				no("-mod=mod", 1, "./...", "-mod", "mod"),
			}},
			{"after double-dash separator", []row{
				no("-exec", 1, "--", "-exec=x"),
				no("-exec", 2, "./...", "--", "--exec=x"),
			}},
			{"go test -test. alias", []row{
				no("-coverprofile", 0, "-test.coverprofile=/tmp/c"),
				no("-coverprofile", 0, "--test.coverprofile=/tmp/c"),
				ok("-test.v"),
			}},
			{"allowed", []row{
				ok("-run", "TestX"),
				ok("-v"),
				ok("./..."),
				ok("-count=1"),
				ok("-json"),
				ok("-mod=readonly"),
				ok("--cover"),
				ok("-run=TestA/B", "-v", "./..."),
				ok(),
			}},
		},
	}, {
		name: "gofmt", style: Go, deny: pathDenyList,
		spellings: []spelling{
			{"plain prefix", []row{
				no("/", 0, "/etc/passwd"),
				no("..", 1, "-l", "../x"),
				no("-w", 0, "-w"),
			}},
			{"flag value", []row{
				no("/", 0, "-r=/etc/x"),
				no("..", 0, "--cpuprofile=../x"),
				no("-w", 0, "--w=true"),
			}},
			{"allowed", []row{
				ok("-d", "main.go"),
				ok("-r=a/b -> c", "x/y.go"),
				ok("./pkg"),
			}},
		},
	}})
}

func TestDenyGNU(t *testing.T) {
	runSuites(t, []suite{{
		name: "sed/tar", style: GNU, deny: gnuDenyList,
		spellings: []spelling{
			{"plain prefix", []row{
				no("-i", 0, "-i"),
				no("-i", 0, "-i.bak"),
				no("--in-place", 0, "--in-place=.bak"),
				no("--checkpoint-action", 0, "--checkpoint-action", "exec=x"),
				no("--to-command", 0, "--to-command=sh"),
			}},
			{"abbreviation", []row{
				no("--in-place", 0, "--in-pl"),
				no("--in-place", 0, "--in-pl=.bak"),
				no("--in-place", 0, "--i"),
				no("--checkpoint-action", 0, "--checkpoint-a=exec=x"),
				no("--checkpoint-action", 0, "--checkpoint-a", "exec=x"),
				no("--to-command", 0, "--to-com=sh"),
			}},
			{"bundled short", []row{
				no("-i", 0, "-ni"),
				no("-i", 0, "-Ei.bak"),
				no("-e", 0, "-ne", "p"),
				no("-f", 0, "-nfcmds"),
			}},
			{"after positional", []row{
				no("-i", 2, "s/a/b/", "file", "-i"),
				no("-i", 2, "s/a/b/", "file", "-ni"),
				no("--in-place", 1, "file", "--in-pl"),
			}},
			{"after double-dash separator", []row{
				// A "--" after a positional ends the options: what follows
				// is a file name, checked by plain prefix only.
				ok("s/a/b/", "--", "-ni"),
				ok("s/a/b/", "--", "--in-pl"),
				ok("-n", "s/a/b/", "--", "-Ei.bak"),
				// Plain prefix applies to every argument, so "-i" is still
				// denied after "--" (the reference rule).
				no("-i", 2, "s/a/b/", "--", "-i"),
				no("-i", 1, "--", "-i"),
				// A "--" that an option may take as its value (-n could
				// require one, and so could the subcommand before the
				// first argument) does not end the options.
				no("-i", 2, "-n", "--", "-ni"),
				no("-i", 1, "--", "-ni"),
				ok("-n", "--", "--", "--in-pl"),
				// A long option with "=value" cannot take the "--".
				ok("--posix=x", "--", "-ni"),
			}},
			{"allowed", []row{
				ok("-n"),
				ok("-E"),
				ok("s/a/b/"),
				ok("--version"),
				ok("-n", "-E", "s/a/b/", "file.txt"),
				ok("--posix"),
				ok("--null-data"),
			}},
		},
	}, {
		name: "rg", style: GNU, deny: []string{"--pre", "-z", "-L", "/", ".."},
		spellings: []spelling{
			{"plain prefix", []row{
				no("--pre", 0, "--pre=sh"),
				no("--pre", 0, "--pre-glob=*"),
				no("/", 1, "foo", "/etc"),
			}},
			{"abbreviation", []row{
				no("--pre", 0, "--pr=sh"),
				no("--pre", 0, "--p", "sh"),
			}},
			{"bundled short", []row{
				no("-z", 0, "-iz"),
				no("-L", 0, "-nL"),
			}},
			{"attached value", []row{
				no("/", 0, "-g/etc/*"),
				no("..", 0, "-ng.."),
				no("/", 0, "--glob=/etc/*"),
			}},
			{"allowed", []row{
				ok("-n", "TODO", "src"),
				ok("--glob=*.go", "-i", "foo"),
				ok("-e", "a/b", "-g", "*.go"),
			}},
		},
	}})
}

func TestDenyGit(t *testing.T) {
	runSuites(t, []suite{{
		name: "git diff", style: Git, deny: gitDenyList,
		spellings: []spelling{
			{"plain prefix", []row{
				no("-c", 0, "-c", "core.pager=x"),
				no("-c", 0, "-ccore.pager=x"),
				no("--open-files-in-pager", 0, "--open-files-in-pager"),
				no("-O", 0, "-Otouch"),
				no("--output", 0, "--output=/tmp/x"),
				no("--ext-diff", 0, "--ext-diff"),
				no("--no-index", 0, "--no-index"),
				no("/", 0, "/etc/passwd"),
				no("..", 0, "../x"),
			}},
			{"abbreviation", []row{
				no("--open-files-in-pager", 0, "--open-files-in-pa=touch x"),
				no("--output", 0, "--out=/tmp/x"),
				no("--textconv", 0, "--textc"),
				no("--no-index", 0, "--no-in"),
				no("--config-env", 0, "--config=x"),
				// Without git's option table every prefix may be a unique
				// abbreviation, so --text (a real option of its own) is
				// denied as an abbreviation of --textconv. Conservative.
				no("--textconv", 0, "--text"),
			}},
			{"bundled short", []row{
				no("-O", 0, "-nOtouch"),
				no("-c", 0, "-pc", "x=y"),
			}},
			{"after positional", []row{
				no("--output", 1, "HEAD", "--output=x"),
				no("--output", 1, "HEAD", "--out=x"),
			}},
			{"after double-dash separator", []row{
				// Plain prefix applies after "--" too: "-c" starts with "-c".
				no("-c", 1, "--", "-c"),
				no("-c", 2, "HEAD", "--", "-c"),
				no("/", 2, "HEAD", "--", "/etc/passwd"),
				// Only the hardened readings stop at "--".
				ok("HEAD", "--", "-nOtouch"),
				ok("HEAD", "--", "--out=x"),
			}},
			{"negation", []row{
				ok("--no-ext-diff"),
				ok("--no-textconv"),
				ok("--no-ext"),
			}},
			{"flag value", []row{
				no("/", 0, "--relative=/etc"),
				ok("--relative=sub/dir"),
			}},
			{"allowed", []row{
				ok("--cached"),
				ok("--color=always"),
				ok("--stat"),
				ok("-p"),
				ok("HEAD~1"),
				ok("HEAD~1..HEAD", "--", "main.go"),
				ok("--name-only", "--exit-code", "-U3", "-M50%", "--word-diff"),
			}},
		},
	}})
}

func TestDenyAny(t *testing.T) {
	runSuites(t, []suite{{
		name: "unknown binary", style: Any, deny: []string{"--in-place", "-exec", "-c"},
		spellings: []spelling{
			{"plain prefix", []row{
				no("-exec", 0, "-execdir"),
				no("-c", 0, "-cx"),
			}},
			{"GNU abbreviation", []row{
				no("--in-place", 0, "--in-pl"),
			}},
			{"Go double dash", []row{
				no("-exec", 0, "--exec"),
				no("-exec", 0, "--exec=x"),
				// Go reads --cached as -cached, which starts with -c.
				no("-c", 0, "--cached"),
			}},
			{"bundled short", []row{
				no("-c", 0, "-nc"),
			}},
			{"nopt", []row{
				no("--in-place", 0, "-in-pl"),
				no("--in-place", 0, "---in-place"),
				no("--in-place", 0, "--no-no-in-place"),
				ok("--no-in-place"),
			}},
			{"after double-dash separator", []row{
				no("-c", 1, "--", "-nc"),
				no("--in-place", 2, "x", "--", "--in-pl"),
			}},
			{"allowed", []row{
				ok("-n", "file"),
				ok("--verbose"),
			}},
		},
	}, {
		name: "npm", style: StyleFor("npm"), deny: []string{"--prefix", "--script-shell", "-g"},
		spellings: []spelling{
			{"nopt", []row{
				no("--prefix", 0, "-prefix=/tmp"),
				no("--prefix", 0, "-pref=/tmp"),
				no("--script-shell", 0, "--script-sh", "sh"),
				no("--prefix", 0, "--NO-no-prefix=/tmp"),
			}},
			{"allowed", []row{
				ok("--", "--watch"),
				ok("--silent"),
			}},
		},
	}})
}

func TestDenyEqualsEntries(t *testing.T) {
	runSuites(t, []suite{{
		name: "GNU value entry", style: GNU, deny: []string{"--checkpoint-action=exec", "-I=sh"},
		spellings: []spelling{
			{"attached", []row{
				no("--checkpoint-action=exec", 0, "--checkpoint-action=exec=x"),
				no("--checkpoint-action=exec", 0, "--checkpoint-a=exec=x"),
				ok("--checkpoint-a=echo"),
				no("-I=sh", 0, "-Ish"),
				no("-I=sh", 0, "-xvIsh"),
				no("-I=sh", 0, "-I=sh"),
				ok("-Igzip"),
			}},
			{"split value", []row{
				no("--checkpoint-action=exec", 0, "--checkpoint-act", "exec=x"),
				ok("--checkpoint-act", "echo"),
				no("-I=sh", 0, "-xI", "sh -c x"),
				ok("-xI", "gzip"),
			}},
		},
	}})
}

func TestAllow(t *testing.T) {
	runSuites(t, []suite{{
		name: "go", style: Go, allow: []string{"-v", "-run=", "./", "Test"},
		spellings: []spelling{
			{"exact flag", []row{
				ok("-v"),
				ok("--v"),
				ok("-v=true"),
				no("-v", 0, "-vettool=/x"),
				no("-v", 0, "-vet=off"),
			}},
			{"flag with value", []row{
				ok("-run=TestX"),
				ok("--run=TestX"),
				no("", 0, "-runx"),
				no("", 0, "-run", "TestX"),
			}},
			{"positional", []row{
				ok("./..."),
				ok("./pkg", "-v"),
				no("", 1, "./pkg", "pkg"),
				no("", 0, "---v"),
			}},
		},
	}, {
		name: "gnu", style: GNU, allow: []string{"-n", "-E", "-l=", "--posix", "--line-length=", "s/"},
		spellings: []spelling{
			{"short", []row{
				ok("-n"),
				ok("-E"),
				no("", 0, "-i"),
			}},
			{"bundled short", []row{
				ok("-nE"),
				ok("-nEn"),
				no("-n", 0, "-ni"),
				no("-n", 0, "-n=x"),
			}},
			{"attached value", []row{
				ok("-l80"),
				ok("-nl80"),
				ok("-l"),
			}},
			{"long", []row{
				ok("--posix"),
				ok("--line-length=80"),
				no("", 0, "--pos"),
				no("", 0, "--line-length"),
				no("--posix", 0, "--posixx"),
				no("", 0, "--n"),
			}},
			{"positional", []row{
				ok("s/a/b/"),
				no("", 0, "file"),
			}},
		},
	}, {
		name: "any", style: Any, allow: []string{"-v", "--color="},
		spellings: []spelling{
			{"every style must admit", []row{
				ok("-v"),
				ok("--color=auto"),
				no("", 0, "--v"),
				no("-v", 0, "-vv"),
				no("-v", 0, "-vettool=x"),
			}},
		},
	}, {
		name: "deny wins", style: Go, allow: []string{"-v"}, deny: []string{"-exec"},
		spellings: []spelling{
			{"allow ignored", []row{
				ok("anything"),
				ok("-vettool=x"),
				no("-exec", 0, "-exec"),
			}},
		},
	}})
}

func TestMalformed(t *testing.T) {
	for _, style := range []Style{Any, Go, GNU, Git} {
		for _, c := range []struct {
			args  []string
			index int
			word  string
		}{
			{[]string{"ok", "a\x00b"}, 1, "NUL"},
			{[]string{"a\nb"}, 0, "newline"},
			{[]string{"-v", "-v", "a\rb", "-exec"}, 2, "carriage return"},
		} {
			r := Check(style, nil, []string{"-exec"}, c.args)
			if r == nil || r.List != "" || r.Index != c.index || !strings.Contains(r.Reason, c.word) {
				t.Errorf("%s %q: got %+v", style, c.args, r)
			}
			if r := Check(style, nil, nil, c.args); r == nil {
				t.Errorf("%s %q with no lists: allowed", style, c.args)
			}
		}
	}
	many := make([]string, MaxArgs+1)
	if r := Check(Go, nil, nil, many); r == nil || r.Index != MaxArgs || !strings.Contains(r.Error(), "4097 arguments") {
		t.Errorf("too many arguments: got %v", r)
	}
	if r := Check(Go, nil, nil, many[:MaxArgs]); r != nil {
		t.Errorf("%d arguments: %v", MaxArgs, r)
	}
	big := strings.Repeat("x", MaxBytes/2+1)
	if r := Check(Go, nil, nil, []string{"a", big, big}); r == nil || r.Index != 2 || len(r.Error()) > 1000 {
		t.Errorf("too large: got %v", r)
	}
	if r := Check(Go, nil, nil, []string{big[:MaxBytes/2], big[:MaxBytes/2]}); r != nil {
		t.Errorf("exactly %d bytes: %v", MaxBytes, r)
	}
}

func TestErrorMessage(t *testing.T) {
	r := Check(Go, nil, []string{"-exec"}, []string{"./...", "--exec=x"})
	want := `argument 1 "--exec=x" is denied by denyArgs prefix "-exec" (Go flags accept --exec for -exec)`
	if r == nil || r.Error() != want {
		t.Errorf("got %v, want %s", r, want)
	}
	r = Check(GNU, nil, []string{"--in-place"}, []string{"--in-pl"})
	want = `argument 0 "--in-pl" is denied by denyArgs prefix "--in-place" (GNU getopt accepts --in-pl as an abbreviation of --in-place)`
	if r == nil || r.Error() != want {
		t.Errorf("got %v, want %s", r, want)
	}
	r = Check(Git, nil, []string{"-O"}, []string{"-nOtouch"})
	want = `argument 0 "-nOtouch" is denied by denyArgs prefix "-O" (git bundles short options: -nOtouch includes -O)`
	if r == nil || r.Error() != want {
		t.Errorf("got %v, want %s", r, want)
	}
	r = Check(Git, nil, []string{"-O"}, []string{"-Ox"})
	want = `argument 0 "-Ox" is denied by denyArgs prefix "-O" (plain prefix match)`
	if r == nil || r.Error() != want {
		t.Errorf("got %v, want %s", r, want)
	}
	r = Check(Go, []string{"-v"}, nil, []string{"-vettool=/x"})
	if r == nil || !strings.HasPrefix(r.Error(), `argument 0 "-vettool=/x" is not admitted by allowArgs prefix "-v" (`) {
		t.Errorf("got %v", r)
	}
	// Control and bidirectional characters from an argument never reach a
	// message unescaped.
	r = Check(GNU, nil, []string{"--in-place"}, []string{"--in\u202e\x1b"})
	if r != nil {
		t.Errorf("got %v", r)
	}
	r = Check(GNU, nil, []string{"-i"}, []string{"-n\u202e\x1bi"})
	if r == nil || strings.ContainsAny(r.Error(), "\u202e\x1b") {
		t.Errorf("got %q", r.Error())
	}
}

func TestStyle(t *testing.T) {
	for bin, want := range map[string]Style{
		"go": Go, "/usr/local/go/bin/go": Go, "gofmt": Go, "git": Git, "/usr/bin/git": Git, "git.exe": Git,
		"cargo": GNU, "rg": GNU, "sed": GNU, "tar": GNU, "find": GNU, "make": GNU,
		"npm": Any, "npx": Any, "python3": Any, "": Any, "mytool": Any,
	} {
		if got := StyleFor(bin); got != want {
			t.Errorf("StyleFor(%q) = %s, want %s", bin, got, want)
		}
	}
	for _, s := range []Style{Any, Go, GNU, Git} {
		if p, ok := ParseStyle(s.String()); !ok || p != s {
			t.Errorf("ParseStyle(%q) = %v, %v", s.String(), p, ok)
		}
	}
	if _, ok := ParseStyle("posix"); ok {
		t.Error("ParseStyle accepted posix")
	}
	if got := Style(9).String(); got != "Style(9)" {
		t.Errorf("Style(9).String() = %q", got)
	}
	// An unknown style value is treated as Any.
	if r := Check(Style(9), nil, []string{"-exec"}, []string{"--exec"}); r == nil {
		t.Error("unknown style allowed --exec")
	}
}

// TestDefaultLists runs everyday arguments past the shipped tools' deny
// lists, so that hardening does not make ordinary calls impossible.
func TestDefaultLists(t *testing.T) {
	goTest := []string{"-exec", "-toolexec", "-vettool", "-o", "-outputdir", "-coverprofile", "-cpuprofile",
		"-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-fuzz", "-args", "-test.",
		"-ldflags", "-gcflags", "-asmflags", "-gccgoflags", "-overlay", "-modfile", "-mod", "-pgo", "-C", "-pkgdir", "/", ".."}
	gitDiff := []string{"-c", "--config-env", "--exec-path", "--git-dir", "--work-tree", "-C", "--paginate",
		"--upload-pack", "--receive-pack", "--ext-diff", "--textconv", "--open-files-in-pager",
		"--show-signature", "--output", "-O", "--no-index", "/", ".."}
	cargoTest := []string{"--config", "-Z", "--target-dir", "--manifest-path", "--lockfile-path", "--artifact-dir",
		"--out-dir", "-C", "--logfile"}
	for _, c := range []struct {
		bin  string
		deny []string
		args []string
	}{
		{"go", goTest, []string{"-run=TestA/B", "-v", "-count=1", "-race", "-short", "-cover", "-timeout=30s", "-json", "-failfast", "-bench=.", "-benchmem", "-p=4", "-vet=off", "-tags=x", "-shuffle=on", "./..."}},
		{"git", gitDiff, []string{"--cached", "--stat", "--color=always", "--name-only", "--name-status", "--patch", "--word-diff", "--raw", "--relative=sub", "--unified=5", "-U3", "-M", "-w", "--check", "--cc", "--exit-code", "--graph", "--oneline", "--summary", "HEAD~1..HEAD", "--", "main.go"}},
		{"cargo", cargoTest, []string{"--release", "--lib", "--workspace", "-p", "crate", "--all-features", "-q", "-vv", "--color=always", "-j2", "--", "--nocapture", "--test-threads=1", "--exact"}},
	} {
		if r := Check(StyleFor(c.bin), nil, c.deny, c.args); r != nil {
			t.Errorf("%s: %v", c.bin, r)
		}
	}
}

// FuzzCheck: Check never panics, a plain prefix match of a deny entry is
// always rejected (at or before that argument), Any rejects whatever another
// style rejects, and adding a deny entry never admits more.
func FuzzCheck(f *testing.F) {
	f.Add(uint8(1), "-exec\x1f-o", "./...\x1f--exec=x", "-mod=mod")
	f.Add(uint8(2), "-i\x1f--in-place", "s/a/b/\x1f--\x1f-ni", "--to-command")
	f.Add(uint8(3), "-c\x1f-O\x1f/", "HEAD\x1f-nOtouch\x1f--out=/x", "--no-index")
	f.Add(uint8(0), "--prefix\x1f-g", "-pref=/x\x1f--no-no-g", "-I=sh")
	f.Add(uint8(2), "", "-nE\x1f-l80", "-n")
	f.Fuzz(func(t *testing.T, style uint8, deny, args, extra string) {
		st := Style(style % 5) // 4 is out of range: treated as Any
		dl := split(deny)
		al := split(args)
		r := Check(st, nil, dl, al)
		if r != nil {
			_ = r.Error()
			if r.Index < 0 || r.Index >= len(al) || r.Arg != al[r.Index] {
				t.Fatalf("bad index %+v for %q", r, al)
			}
		}
		first := -1
		for i, a := range al {
			for _, e := range dl {
				if strings.HasPrefix(a, e) && first < 0 {
					first = i
				}
			}
		}
		if first >= 0 {
			if r == nil {
				t.Fatalf("%s deny %q args %q: argument %d has a denied prefix but was allowed", st, dl, al, first)
			}
			if r.List != "" && r.Index > first {
				t.Fatalf("%s deny %q args %q: rejected at %d after plain match at %d", st, dl, al, r.Index, first)
			}
		}
		if r != nil && Check(Any, nil, dl, al) == nil {
			t.Fatalf("%s rejects deny %q args %q but Any allows: %v", st, dl, al, r)
		}
		if r != nil && Check(st, nil, append(dl, extra), al) == nil {
			t.Fatalf("adding deny entry %q admitted args %q", extra, al)
		}
		// Allow mode: Any rejects whatever another style rejects.
		if ra := Check(st, dl, nil, al); ra != nil {
			_ = ra.Error()
			if Check(Any, dl, nil, al) == nil {
				t.Fatalf("%s rejects allow %q args %q but Any admits: %v", st, dl, al, ra)
			}
		}
	})
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.Split(s, "\x1f")
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}
