package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/opair-dev/opair/plugins/exec/run"
)

// summarize makes the one-line status a human sees for a finished command,
// by the tool's summary kind: commandEcho, gitDiff, gitLog, gitStatus, grep,
// lineCount:<noun>, or "" (the command's last line of output).
func summarize(kind string, argv []string, res run.Result, timeout time.Duration) string {
	out := string(res.Output)
	var s string
	switch {
	case kind == "commandEcho":
		s = "$ " + echo(argv)
	case kind == "gitDiff":
		s = diffSummary(out)
	case kind == "gitLog":
		s = logSummary(out)
	case kind == "gitStatus":
		s = statusSummary(out)
	case kind == "grep":
		s = grepSummary(out)
	case strings.HasPrefix(kind, "lineCount:"):
		s = count(len(nonEmptyLines(out)), strings.TrimPrefix(kind, "lineCount:"))
	default:
		lines := nonEmptyLines(out)
		if len(lines) == 0 {
			s = "(no output)"
		} else {
			s = lines[len(lines)-1]
		}
	}
	s = strings.ReplaceAll(s, "\t", " ") // a status line, not a table
	if len(s) > 200 {
		s = s[:197] + "…"
	}
	switch {
	case res.TimedOut:
		s += fmt.Sprintf(" (timed out after %s)", timeout)
	case res.Signal != "":
		s += " (killed: " + res.Signal + ")"
	case res.ExitCode != 0:
		s += fmt.Sprintf(" (exit %d)", res.ExitCode)
	}
	return s
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, "\r"))
		}
	}
	return out
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") || strings.HasSuffix(noun, "x") || strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "sh") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	if strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])) {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// echo renders argv as a shell would read it, with the binary's base name.
func echo(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if i == 0 {
			a = filepath.Base(a)
		}
		words[i] = shellQuote(a)
	}
	return strings.Join(words, " ")
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var statLine = regexp.MustCompile(`^\s*(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?`)

func diffSummary(out string) string {
	files, add, del := 0, 0, 0
	for _, l := range strings.Split(out, "\n") {
		if m := statLine.FindStringSubmatch(l); m != nil {
			return strings.TrimSpace(l)
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			files++
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	if files == 0 {
		if lines := nonEmptyLines(out); len(lines) > 0 {
			return count(len(lines), "line")
		}
		return "no changes"
	}
	return fmt.Sprintf("%s changed, +%d −%d", count(files, "file"), add, del)
}

var commitLine = regexp.MustCompile(`^commit [0-9a-f]{7,64}\b`)

func logSummary(out string) string {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if commitLine.MatchString(l) {
			n++
		}
	}
	if n == 0 { // --oneline and custom formats: one commit per line
		n = len(nonEmptyLines(out))
	}
	if n == 0 {
		return "no commits"
	}
	return count(n, "commit")
}

func statusSummary(out string) string {
	counts := map[string]int{}
	order := []string{"modified", "new", "deleted", "renamed", "untracked", "conflicted"}
	untrackedSection := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Untracked files:"):
			untrackedSection = true
		case strings.HasPrefix(l, "Changes ") || strings.HasPrefix(l, "Unmerged paths:"):
			untrackedSection = false
		case strings.HasPrefix(l, "\t"):
			entry := strings.TrimSpace(l)
			switch {
			case untrackedSection:
				counts["untracked"]++
			case strings.HasPrefix(entry, "modified:"):
				counts["modified"]++
			case strings.HasPrefix(entry, "new file:"):
				counts["new"]++
			case strings.HasPrefix(entry, "deleted:"):
				counts["deleted"]++
			case strings.HasPrefix(entry, "renamed:"):
				counts["renamed"]++
			case strings.HasPrefix(entry, "both "):
				counts["conflicted"]++
			}
		case len(l) > 3 && l[2] == ' ' && isStatusCode(l[:2]):
			switch xy := l[:2]; {
			case xy == "??":
				counts["untracked"]++
			case strings.ContainsAny(xy, "U") || xy == "AA" || xy == "DD":
				counts["conflicted"]++
			case strings.ContainsRune(xy, 'R'):
				counts["renamed"]++
			case strings.ContainsRune(xy, 'A'):
				counts["new"]++
			case strings.ContainsRune(xy, 'D'):
				counts["deleted"]++
			default:
				counts["modified"]++
			}
		}
	}
	var parts []string
	for _, k := range order {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) == 0 {
		if strings.Contains(out, "nothing to commit") || strings.TrimSpace(out) == "" {
			return "clean"
		}
		lines := nonEmptyLines(out)
		return lines[0]
	}
	return strings.Join(parts, ", ")
}

func isStatusCode(xy string) bool {
	for _, c := range xy {
		if !strings.ContainsRune(" MADRCUT?!", c) {
			return false
		}
	}
	return xy != "  "
}

var grepLine = regexp.MustCompile(`^(.+?):(\d+)[:-]`)

func grepSummary(out string) string {
	lines := nonEmptyLines(out)
	files := map[string]bool{}
	matches := 0
	for _, l := range lines {
		if m := grepLine.FindStringSubmatch(l); m != nil {
			files[m[1]] = true
			matches++
		}
	}
	if matches == 0 {
		if len(lines) == 0 {
			return "no matches"
		}
		return count(len(lines), "match")
	}
	return fmt.Sprintf("%s in %s", count(matches, "match"), count(len(files), "file"))
}
