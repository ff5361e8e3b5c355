package files

import (
	"fmt"
	"path"
	"strings"

	"github.com/opair-dev/opair/sdk"
)

const bom = "\xEF\xBB\xBF"

// maxListedMatches bounds the matches an ambiguity error lists.
const maxListedMatches = 50

type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"oldString"`
	NewString  string `json:"newString"`
	ReplaceAll bool   `json:"replaceAll"`
}

// toCRLF turns every line ending of s into "\r\n".
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// mostlyCRLF reports whether most line endings of s are "\r\n".
func mostlyCRLF(s string) bool {
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && crlf >= strings.Count(s, "\n")-crlf
}

// lineOf returns the 1-based line number of byte offset i in s.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

func editFile(e *env) (*sdk.Result, error) {
	var a editArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	switch {
	case a.OldString == "":
		return sdk.Errorf("oldString is empty: give the exact text to replace (to create a file, use a createFile tool)"), nil
	case a.OldString == a.NewString:
		return sdk.Errorf("oldString and newString are the same: there is nothing to change"), nil
	}
	r, res, err := e.resolveWrite(a.Path, true)
	if r == nil {
		return res, err
	}
	dir, err := e.pinDir(r.Rel, false)
	if err != nil {
		return writeErr(r, err)
	}
	defer dir.Close()
	base := path.Base(r.Rel)
	before, _, err := current(dir, base, r.Info)
	if err != nil {
		return writeErr(r, err)
	}
	if why := binaryReason(before); why != "" {
		return sdk.Errorf("refused: %s looks binary (%s); editFile edits text files only", r.Rel, why), nil
	}
	content := string(before)
	hasBOM := strings.HasPrefix(content, bom)
	body := strings.TrimPrefix(content, bom)
	old, repl := strings.TrimPrefix(a.OldString, bom), a.NewString

	count := strings.Count(body, old)
	adapted := false
	if count == 0 && strings.Contains(body, "\r\n") && strings.Contains(old, "\n") {
		// The model copied the text with "\n" line endings from a CRLF file.
		if c := strings.Count(body, toCRLF(old)); c > 0 {
			old, repl, count, adapted = toCRLF(old), toCRLF(repl), c, true
		}
	}
	if !adapted && mostlyCRLF(body) && strings.Contains(repl, "\n") && !strings.Contains(repl, "\r\n") {
		repl = toCRLF(repl) // new lines in a CRLF file get CRLF endings
	}
	if count == 0 {
		return notFound(r.Rel, body, a.OldString), nil
	}
	if count > 1 && !a.ReplaceAll {
		return ambiguous(r.Rel, body, old, count), nil
	}
	// Where the replacements land, for the result.
	firstAt := strings.Index(body, old)
	var newBody string
	if a.ReplaceAll {
		newBody = strings.ReplaceAll(body, old, repl)
	} else {
		newBody = strings.Replace(body, old, repl, 1)
	}
	after := []byte(newBody)
	if hasBOM {
		after = append([]byte(bom), after...)
	}
	if len(after) > maxWriteFile {
		return sdk.Errorf("refused: the edited %s would be %d bytes, over the %d-byte limit", r.Rel, len(after), maxWriteFile), nil
	}
	beforeSum := sha(before)
	want, hasWant := e.expected()
	if err := checkExpected(want, hasWant, r.Rel, a.Path, beforeSum); err != nil {
		return staleResult(r.Rel), nil
	}
	diff := diffFor(r.Rel, before, after, true, true)
	files := []FileChange{{Path: r.Rel, BeforeSHA256: beforeSum, AfterSHA256: sha(after)}}
	summary := fmt.Sprintf("edited %s: %s", r.Rel, plural(count, "replacement"))
	extra := map[string]any{"path": r.Rel, "replacements": count, "line": lineOf(body, firstAt)}
	if e.call.DryRun {
		return writeResult(true, fmt.Sprintf("Would edit %s: %s.", r.Rel, plural(count, "replacement")), summary, diff, files, extra), nil
	}
	uid, gid := owner(r.Info)
	err = writeAtomic(dir, base, after, writeOptions{
		mode: keptMode(r.Info.Mode()), uid: uid, gid: gid,
		check: func() error {
			now, _, err := current(dir, base, r.Info)
			if err != nil {
				return err
			}
			if sha(now) != beforeSum {
				return errChanged
			}
			return nil
		},
	})
	if err != nil {
		return writeErr(r, err)
	}
	// Show the edited region, numbered, so the model sees the result.
	startLine := lineOf(newBody, firstAt)
	endLine := startLine + strings.Count(repl, "\n")
	text := fmt.Sprintf("Edited %s: %s (first at line %d).\n%s", r.Rel, plural(count, "replacement"), startLine, excerpt(newBody, startLine-2, endLine+2, 30))
	return writeResult(false, text, summary, diff, files, extra), nil
}

// excerpt returns lines from..to (1-based, clamped) of s, numbered, at most
// max lines.
func excerpt(s string, from, to, max int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	from = max1(from)
	to = min(to, len(lines), from+max-1)
	var sb strings.Builder
	for i := from; i <= to; i++ {
		sb.WriteString(numbered(i, cutLine(strings.TrimSuffix(lines[i-1], "\r"), maxLineRunes)))
	}
	return sb.String()
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// ambiguous is the error for an oldString found several times: it names
// the line each match starts on and quotes it.
func ambiguous(rel, body, old string, count int) *sdk.Result {
	var at []int
	off, line := 0, 1
	for len(at) < maxListedMatches {
		j := strings.Index(body[off:], old)
		if j < 0 {
			break
		}
		line += strings.Count(body[off:off+j], "\n")
		at = append(at, line)
		off += j + len(old)
		line += strings.Count(old, "\n")
	}
	nums := make([]string, len(at))
	for i, n := range at {
		nums[i] = fmt.Sprint(n)
	}
	more := ""
	if count > len(at) {
		more = fmt.Sprintf(" and %d more", count-len(at))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "oldString matches %d times in %s, at lines %s%s; nothing was changed. Include more surrounding lines in oldString to make it unique, or set replaceAll to true to replace every occurrence.\n", count, rel, strings.Join(nums, ", "), more)
	all := strings.Split(body, "\n")
	for _, n := range at {
		sb.WriteString(numbered(n, cutLine(strings.TrimSuffix(all[n-1], "\r"), 200)))
	}
	return sdk.Errorf("%s", sb.String())
}

// notFound is the error for an oldString found nowhere: it quotes the
// region of the file most like oldString, with line numbers.
func notFound(rel, body, old string) *sdk.Result {
	var sb strings.Builder
	fmt.Fprintf(&sb, "oldString was not found in %s; nothing was changed. It must match the file exactly, whitespace and indentation included.\n", rel)
	if lineNumberPrefixed(old) {
		sb.WriteString("oldString seems to include line-number prefixes (\"   12\\t\"): copy the text without them.\n")
	}
	reg := closestRegion(body, old)
	if reg.score < 0.3 {
		sb.WriteString("No region of the file resembles oldString; read the file again to see its current content.\n")
		return sdk.Errorf("%s", sb.String())
	}
	if reg.trimEqual {
		fmt.Fprintf(&sb, "Lines %d-%d match oldString except for leading or trailing whitespace: copy their exact indentation.\n", reg.start, reg.end)
	} else {
		fmt.Fprintf(&sb, "The closest region is lines %d-%d (%.0f%% similar):\n", reg.start, reg.end, reg.score*100)
	}
	sb.WriteString(excerpt(body, reg.start-2, reg.end+2, 60))
	return sdk.Errorf("%s", sb.String())
}

// lineNumberPrefixed reports whether every non-empty line of s starts with
// a line number and a tab, as readFileLines prints them.
func lineNumberPrefixed(s string) bool {
	seen := false
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		t := strings.TrimLeft(l, " ")
		i := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(t) || t[i] != '\t' {
			return false
		}
		seen = true
	}
	return seen
}
