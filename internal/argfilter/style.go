package argfilter

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Style is how a binary parses its flags. It decides which spellings of a
// denied option Check also rejects, and which spellings an allowed flag
// admits. Plain prefix matching of the raw argument applies in every style,
// to every argument, before and after "--".
//
// Deny entries are read as follows. An entry without a leading dash ("/",
// "..") is a plain prefix; it is also matched against option values
// ("--relative=/etc", "-coverpkg=/x", and for GNU and Git the rest of a
// short-option cluster, "-g/etc"), since the split form "-g" "/etc" is
// denied by the plain rule. An entry "--name" or a multi-letter "-name" is a
// long option; under GNU and Git a one-letter "-x" is a short option, which
// never matches a long option ("-c" does not deny "--cached" there, though
// it does under Go and Any, where --cached is -cached). An entry with "="
// ("-mod=mod") matches the option with a value starting with the part after
// "=", whether attached or in the next argument.
//
// Long-option abbreviations: without the binary's option table, any
// non-empty prefix of a denied name may be a unique abbreviation, so all of
// them are denied ("--c" for "--config-env"), including names that are real
// options of their own ("--text" for "--textconv"). This over-denies rare
// spellings to stay safe.
//
// "--": GNU and Git stop reading options at a "--" that cannot be an
// option's value, that is, one whose previous argument is not an option
// that could take the next argument (a short-option cluster, or a long
// option without "=value"). A "--" that is the first argument does not
// count either: the subcommand words before it, which Check does not see,
// might end with such an option. After the "--" only the plain prefix rule
// applies, so deny "-i" still rejects "s/x/y/" "--" "-i" but not
// "s/x/y/" "--" "-ni". Go and Any read every argument as a possible option.
//
// Allow entries admit an argument equal to the entry, and otherwise: a
// non-flag entry admits non-option arguments starting with it; under Go,
// "-name" admits -name, --name, -name=value and --name=value, and
// "-name=V" admits those with a value starting with V; under GNU and Git a
// long entry admits exactly --name (and --name=value; an entry "--name=V"
// requires the value), never an abbreviation; a one-letter "-x" admits x in
// a cluster of admitted letters ("-nE"), and "-x=" (or "-x=V") marks x as
// taking a value, so "-x80" and "-nx80" are admitted; a multi-letter
// "-name=" admits "-name=value". Under Any, every style must admit.
type Style int

const (
	// Any is for a binary whose parser is unknown: every reading of Go, GNU
	// and Git applies at once, plus npm's nopt (any number of dashes,
	// "-pref" for "--prefix", "--no-no-x" for "--x"). "--" never ends the
	// options. An allow entry admits an argument only if every style does.
	// This is the most conservative style.
	Any Style = iota
	// Go is Go's flag package (and cmd/go's flag parsing): -name and --name
	// are the same flag, values come as -name=value or -name value, there
	// is no bundling and no abbreviation. go test, build and vet also take
	// flags after package arguments, and go test hands -test.name to the
	// test binary, where it means -name. "--" is not trusted to end the
	// flags: every argument is read as a possible flag.
	Go
	// GNU is getopt_long and parsers that accept a subset of it (clap,
	// lexopt, BSD getopt): short options -x bundle (-ni is -n -i) and take
	// attached values (-O/tmp/x), long options --name[=value] take the
	// value after "=" or in the next argument and may be abbreviated to any
	// unique prefix (--in-pl is --in-place), and options are still options
	// after positional arguments (argument permutation) until "--".
	GNU
	// Git is git's parse-options: like GNU (bundled short booleans,
	// attached short values -Ocmd, unique-prefix abbreviations of long
	// options --open-files-in-pa, options after positionals until "--").
	// --no-name turns --name off and is not a spelling of --name; an entry
	// that itself starts with "--no-" (such as "--no-index") is matched as
	// written, abbreviations included.
	Git
)

// String returns "any", "go", "gnu" or "git".
func (s Style) String() string {
	switch s {
	case Any:
		return "any"
	case Go:
		return "go"
	case GNU:
		return "gnu"
	case Git:
		return "git"
	}
	return fmt.Sprintf("Style(%d)", int(s))
}

// ParseStyle is the inverse of String, for styles declared in configuration.
func ParseStyle(name string) (Style, bool) {
	for s := Any; s <= Git; s++ {
		if s.String() == name {
			return s, true
		}
	}
	return Any, false
}

// styles is the table StyleFor documents.
var styles = map[string]Style{
	"go": Go, "gofmt": Go, "goimports": Go, "staticcheck": Go, "govulncheck": Go,
	"git": Git,
}

func init() {
	for _, b := range strings.Fields(`ls cat head tail wc sort uniq cut tr cp mv rm mkdir rmdir touch chmod
		stat du df base64 sed grep egrep fgrep diff cmp tar make file gsed ggrep gtar gmake find
		cargo fd rg`) {
		styles[b] = GNU
	}
}

// StyleFor returns the style of a binary by its base name ("/usr/bin/git"
// and "git.exe" are git). Only binaries whose parser is known to be covered
// by a style are listed; everything else is Any, which covers all of them at
// once:
//
//	Go:  go, gofmt, goimports, staticcheck, govulncheck (the flag package)
//	Git: git
//	GNU: GNU coreutils and friends using getopt_long (ls, cat, head, tail,
//	     wc, sort, uniq, cut, tr, cp, mv, rm, mkdir, rmdir, touch, chmod,
//	     stat, du, df, base64, sed, grep, egrep, fgrep, diff, cmp, tar,
//	     make, file and the g-prefixed GNU names gsed, ggrep, gtar,
//	     gmake); find (its own parser: primaries such as -exec are whole
//	     words, which the plain prefix rule covers, and GNU's readings only
//	     add denials); cargo and fd (clap) and rg (lexopt), whose parsers
//	     accept a subset of getopt_long's spellings.
//
// npm, npx, yarn and pnpm are deliberately Any, not GNU: npm's option
// parser (nopt) treats -prefix like --prefix and accepts abbreviations and
// repeated "no-" prefixes, which only Any covers.
func StyleFor(bin string) Style {
	base := filepath.Base(bin)
	base = strings.TrimSuffix(base, ".exe")
	if s, ok := styles[base]; ok {
		return s
	}
	return Any
}

// who names the parser in reasons.
func (s Style) who() string {
	switch s {
	case Go:
		return "Go flags"
	case Git:
		return "git"
	default:
		return "GNU getopt"
	}
}
