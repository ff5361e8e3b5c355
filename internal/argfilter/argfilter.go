// Package argfilter decides whether the arguments a model supplies to an exec
// tool pass the tool file's allowArgs and denyArgs lists. It only inspects
// strings: it never runs, resolves or opens anything.
//
// The reference behaviour is prefix matching: when denyArgs is non-empty, an
// argument that starts with a denied prefix is rejected (and allowArgs is
// ignored); otherwise, when allowArgs is non-empty, an argument that starts
// with no allowed prefix is rejected. Plain prefix matching of every raw
// argument always applies, whatever the binary. On top of it the package
// reads each argument the way the binary could parse it (see Style), so that a
// deny entry also catches every other spelling of the same option: "--exec"
// for "-exec" (Go), "--in-pl" for "--in-place" and "-ni" for "-i" (GNU getopt),
// "--open-files-in-pa=cmd" and "-nOcmd" (git), "-mod" "mod" for "-mod=mod",
// and options placed after positional arguments. An allow entry for a flag
// admits that flag only, not every flag whose name starts with it.
//
// It is shared by the host's gate and the exec plugin's re-check and imports
// only the standard library.
package argfilter

import (
	"fmt"
	"strings"
)

// Limits on what Check accepts at all (SPEC §7.2 item 9: bounded everything).
const (
	// MaxArgs is the largest number of arguments Check accepts.
	MaxArgs = 4096
	// MaxBytes is the largest total size, in bytes, of all arguments.
	MaxBytes = 1 << 20
)

// List names, as used in Rejection.List.
const (
	DenyList  = "denyArgs"
	AllowList = "allowArgs"
)

// Rejection says which argument was refused and why. It is an error.
//
// Check returns a *Rejection; compare it with nil before storing it in an
// error variable (a nil *Rejection in an error interface is not a nil error).
type Rejection struct {
	// Index is the position of the argument in the model's args (0-based).
	// For a split value ("-mod" "mod") it is the flag's position.
	Index int
	// Arg is the rejected argument, unabridged.
	Arg string
	// Prefix is the list entry that rejected it; for allowArgs the entry
	// that the plain prefix rule would have used, or "" when none does.
	Prefix string
	// List is "denyArgs", "allowArgs", or "" for a malformed argument list
	// (control characters, too many or too large arguments).
	List string
	// Reason says how the argument was matched (which spelling rule).
	Reason string
}

// Error names the argument with its index, the prefix, the list and the
// spelling rule that applied.
func (r *Rejection) Error() string {
	arg := quoteShort(r.Arg)
	switch {
	case r.List == DenyList:
		return fmt.Sprintf("argument %d %s is denied by denyArgs prefix %q (%s)", r.Index, arg, r.Prefix, r.Reason)
	case r.List == AllowList && r.Prefix != "":
		return fmt.Sprintf("argument %d %s is not admitted by allowArgs prefix %q (%s)", r.Index, arg, r.Prefix, r.Reason)
	case r.List == AllowList:
		return fmt.Sprintf("argument %d %s is not admitted by allowArgs (%s)", r.Index, arg, r.Reason)
	default:
		return fmt.Sprintf("argument %d %s is rejected (%s)", r.Index, arg, r.Reason)
	}
}

// quoteShort quotes s for a message, cutting very long arguments.
func quoteShort(s string) string {
	const max = 200
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
}

// Check reports whether the model's args may run, or nil when they may.
//
// In order:
//  1. The argument list is bounded (MaxArgs, MaxBytes) and no argument may
//     contain NUL, CR or LF (List "").
//  2. If deny is non-empty, allow is ignored. Each argument, in order, is
//     rejected if it starts with a deny entry (plain prefix, the reference
//     rule, applied to every argument including those after "--"), or if any
//     reading of it that style allows hits a deny entry (see Style).
//  3. Otherwise, if allow is non-empty, every argument must be admitted by
//     an allow entry: a non-flag entry ("./", "Test") admits arguments
//     starting with it; a flag entry admits exactly that flag (see Style for
//     spellings and values); an argument equal to an entry is admitted.
//
// Empty deny entries deny everything; empty allow entries admit nothing but
// the empty argument (the tool-file validator rejects both). An unknown
// Style value is treated as Any.
//
// Check does not see the subcommand words before args; a "--" that is the
// first argument is therefore never taken as the end of the options (the
// last subcommand word might be an option waiting for its value; see Style).
func Check(style Style, allow, deny []string, args []string) *Rejection {
	if r := checkShape(args); r != nil {
		return r
	}
	if style < Any || style > Git {
		style = Any
	}
	if len(deny) > 0 {
		return checkDeny(style, deny, args)
	}
	if len(allow) > 0 {
		return checkAllow(style, allow, args)
	}
	return nil
}

// checkShape applies the limits and the control-character rule.
func checkShape(args []string) *Rejection {
	if len(args) > MaxArgs {
		return &Rejection{Index: MaxArgs, Arg: args[MaxArgs],
			Reason: fmt.Sprintf("%d arguments, over the limit of %d", len(args), MaxArgs)}
	}
	total := 0
	for i, a := range args {
		if k := strings.IndexAny(a, "\x00\n\r"); k >= 0 {
			what := map[byte]string{0: "a NUL", '\n': "a newline (LF)", '\r': "a carriage return (CR)"}[a[k]]
			return &Rejection{Index: i, Arg: a,
				Reason: fmt.Sprintf("it contains %s character; arguments may not contain NUL, CR or LF", what)}
		}
		total += len(a)
		if total > MaxBytes {
			return &Rejection{Index: i, Arg: a,
				Reason: fmt.Sprintf("the arguments up to this one total %d bytes, over the limit of %d", total, MaxBytes)}
		}
	}
	return nil
}

// entry is one allowArgs or denyArgs element, pre-parsed.
type entry struct {
	raw    string
	dashes int    // leading dashes
	flag   bool   // starts with "-" and names something after the dashes
	long   bool   // "--name" or a multi-letter "-name"; otherwise a one-letter short option
	name   string // without dashes, before the first "="
	eq     bool   // the entry contains "=" after the name
	value  string // after the first "="
	noBase string // name without "no-" prefixes (npm's nopt)
	noNeg  bool   // an odd number of "no-" prefixes

	attached [2]string // short "-x=V": "xV" and "x=V", the spellings of x with its value in a cluster
}

func parseEntry(raw string) entry {
	e := entry{raw: raw}
	body := strings.TrimLeft(raw, "-")
	e.dashes = len(raw) - len(body)
	if e.dashes == 0 {
		return e
	}
	name, value, eq := strings.Cut(body, "=")
	if name == "" { // "-", "--", "-=x": no flag name, plain prefix only
		return e
	}
	e.flag, e.name, e.value, e.eq = true, name, value, eq
	e.long = e.dashes >= 2 || len([]rune(name)) > 1
	e.noBase, e.noNeg = stripNo(name)
	e.attached = [2]string{name + value, name + "=" + value}
	return e
}

func parseEntries(list []string) []entry {
	out := make([]entry, len(list))
	for i, s := range list {
		out[i] = parseEntry(s)
	}
	return out
}

// spell writes an entry's flag part as an option with n dashes.
func (e *entry) spell(n int) string {
	return strings.Repeat("-", n) + e.name
}

// w shows a word taken from an argument or entry in a reason: bare when it
// is short printable ASCII without quotes, spaces or backslashes, quoted
// (and cut) otherwise, so that no control or bidirectional character reaches
// a message.
func w(s string) string {
	if s == "" || len(s) > 64 {
		return q(s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '\'' || c == '`' {
			return q(s)
		}
	}
	return s
}

// q quotes a value taken from an argument or entry in a reason, cut to 64
// bytes.
func q(s string) string {
	if len(s) <= 64 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", s[:64])
}
