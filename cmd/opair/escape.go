package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/opair-dev/opair/host/session"
)

// escapeTerminal makes a string safe to show at a prompt: control
// characters (which could move the cursor or rewrite the line) and Unicode
// bidirectional marks (which could make the text read differently from what
// runs, CVE-2021-42574) are shown as escapes.
func escapeTerminal(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isBidi(r) || r == 0xfeff || (r >= 0x200b && r <= 0x200d):
			fmt.Fprintf(&b, `\u{%04x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// displayArgv renders a command line exactly: each word shell-quoted when it
// needs it, then escaped for the terminal.
func displayArgv(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if plainArg.MatchString(a) {
			words[i] = a
		} else {
			words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return escapeTerminal(strings.Join(words, " "))
}

// describeApproval writes what the human approves: the exact command line
// and where it runs, or the diff of a write, and why it asks. Every prompt
// (terminal, interactive session, MCP elicitation) shows the same text.
func describeApproval(w io.Writer, a session.Approval) {
	fmt.Fprintf(w, "%s wants to run", a.Tool)
	switch {
	case len(a.Argv) > 0:
		fmt.Fprintf(w, ":\n  %s\n  in %s\n", displayArgv(a.Argv), escapeTerminal(a.Root))
	case a.Diff != "":
		fmt.Fprintf(w, ", changing:\n")
		for _, line := range strings.Split(strings.TrimRight(a.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", escapeTerminal(line))
		}
	default:
		fmt.Fprintf(w, " with %s\n", escapeTerminal(string(a.Args)))
	}
	fmt.Fprintf(w, "  why it asks: %s\n", escapeTerminal(a.Reason))
}

// printToolStart and printToolEnd are the tool activity lines of a session.
func printToolStart(w io.Writer, name string, args json.RawMessage, argv []string) {
	if len(argv) > 0 {
		fmt.Fprintf(w, "→ %s: %s\n", name, displayArgv(argv))
		return
	}
	fmt.Fprintf(w, "→ %s %s\n", name, escapeTerminal(truncateRunes(string(args), 200)))
}

func printToolEnd(w io.Writer, name, summary string, isError bool) {
	mark := "✓"
	if isError {
		mark = "✗"
	}
	fmt.Fprintf(w, "  %s %s: %s\n", mark, name, escapeTerminal(truncateRunes(summary, 300)))
}
