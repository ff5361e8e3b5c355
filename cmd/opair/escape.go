package main

import (
	"fmt"
	"regexp"
	"strings"
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
