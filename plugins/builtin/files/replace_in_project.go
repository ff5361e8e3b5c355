package files

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/opair-dev/opair/internal/pathclass"
	"github.com/opair-dev/opair/plugins/builtin/search"
	"github.com/opair-dev/opair/sdk"
)

const (
	// maxReplaceFiles bounds the files one replaceInProject call changes.
	maxReplaceFiles = 1000
	// maxReplaceBytes bounds the content (before and after) one call holds.
	maxReplaceBytes = 64 << 20
)

type replaceArgs struct {
	Pattern     string `json:"pattern"`
	Replacement string `json:"replacement"`
	Glob        string `json:"glob"`
	Literal     bool   `json:"literal"`
	// ExcludePaths are added by the host: the globs of deny rules on paths.
	ExcludePaths []string `json:"excludePaths"`
}

// replaced is one file's change.
type replaced struct {
	rel           string
	count         int
	before, after []byte
	beforeSum     string
	skipText      bool // not UTF-8 text: left alone
}

// FileCount is one file's number of replacements, for the details.
type FileCount struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

func replaceInProject(e *env) (*sdk.Result, error) {
	var a replaceArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	if a.Pattern == "" {
		return sdk.Errorf("pattern is empty: give the regular expression (or, with literal, the text) to replace"), nil
	}
	if a.Glob != "" {
		if err := search.ValidateGlob(a.Glob); err != nil {
			return sdk.Errorf("%v: use doublestar syntax over the path relative to the project root, e.g. \"**/*.go\"", err), nil
		}
	}
	var re *regexp.Regexp
	if !a.Literal {
		var err error
		if re, err = search.CompileRegexp(a.Pattern, false, false); err != nil {
			return sdk.Errorf("invalid pattern %q: %v (Go regexp syntax; set literal to replace plain text)", a.Pattern, err), nil
		}
	}
	pat, repl := []byte(a.Pattern), []byte(a.Replacement)
	_ = e.prog.Status("scanning the project for " + a.Pattern)

	// The project class only, whatever the handler block says.
	w := &search.Walker{Root: e.res.Root(), Ignore: e.ign, Glob: a.Glob, Exclude: a.ExcludePaths}
	var changes []*replaced
	var total, held int
	var over string
	nonText := 0
	st, err := search.Scan(e.ctx, w, search.ScanOptions{MaxFileSize: maxWriteFile},
		func(rel string, data []byte) *replaced {
			var n int
			var after []byte
			if a.Literal {
				if n = bytes.Count(data, pat); n > 0 {
					after = bytes.ReplaceAll(data, pat, repl)
				}
			} else if n = len(re.FindAllIndex(data, -1)); n > 0 {
				after = re.ReplaceAll(data, repl)
			}
			if n == 0 {
				return nil
			}
			if binaryReason(data) != "" {
				return &replaced{rel: rel, skipText: true}
			}
			if bytes.Equal(after, data) {
				return nil // every match replaced by itself
			}
			return &replaced{rel: rel, count: n, before: bytes.Clone(data), after: after, beforeSum: sha(data)}
		},
		func(rel string, c *replaced) bool {
			if c == nil {
				return true
			}
			if c.skipText {
				nonText++
				return true
			}
			changes = append(changes, c)
			total += c.count
			held += len(c.before) + len(c.after)
			switch {
			case len(changes) > maxReplaceFiles:
				over = fmt.Sprintf("the pattern matches in more than %d files", maxReplaceFiles)
				return false
			case held > maxReplaceBytes:
				over = fmt.Sprintf("the files to change hold more than %d MiB", maxReplaceBytes>>20)
				return false
			}
			return true
		})
	if err != nil {
		if e.ctx.Err() != nil {
			return nil, e.ctx.Err()
		}
		return nil, fmt.Errorf("scanning the project: %w", err)
	}
	if over != "" {
		return sdk.Errorf("refused: %s, over the limit of one replaceInProject call; nothing was changed. Narrow the glob or the pattern.", over), nil
	}
	if len(changes) == 0 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "No matches for %q in the project's files; nothing was changed.\n", a.Pattern)
		hintGlob(&sb, a.Glob)
		notes(&sb, st)
		return sdk.Errorf("%s", sb.String()), nil
	}

	// Each file must still be a project file the scope grants, and writable.
	resolved := make([]*pathclass.Resolved, len(changes))
	for i, c := range changes {
		r, res, err := e.resolveWrite(c.rel, true)
		if r == nil {
			if res != nil {
				return sdk.Errorf("refused: %s; nothing was changed", strings.TrimPrefix(text(res), "refused: ")), nil
			}
			return nil, err
		}
		if r.Rel != c.rel {
			return sdk.Errorf("refused: %s changed during the call (it now leads to %s); nothing was changed", c.rel, r.Rel), nil
		}
		resolved[i] = r
	}
	want, hasWant := e.expected()
	if hasWant {
		var stale []string
		for _, c := range changes {
			if checkExpected(want, true, c.rel, "", c.beforeSum) != nil {
				stale = append(stale, c.rel)
			}
		}
		if len(want) != len(changes) {
			approved := map[string]bool{}
			for _, c := range changes {
				approved[c.rel] = true
			}
			for p := range want {
				if !approved[p] {
					stale = append(stale, p)
				}
			}
		}
		if len(stale) > 0 {
			sort.Strings(stale)
			return staleResult(strings.Join(stale, ", ")), nil
		}
	}

	var diff strings.Builder
	files := make([]FileChange, len(changes))
	counts := make([]FileCount, len(changes))
	for i, c := range changes {
		diff.WriteString(diffFor(c.rel, c.before, c.after, true, true))
		files[i] = FileChange{Path: c.rel, BeforeSHA256: c.beforeSum, AfterSHA256: sha(c.after)}
		counts[i] = FileCount{Path: c.rel, Count: c.count}
	}
	summary := fmt.Sprintf("replaced %s in %s", plural(total, "match"), plural(len(changes), "file"))
	extra := map[string]any{"pattern": a.Pattern, "replacement": a.Replacement, "glob": a.Glob, "literal": a.Literal, "counts": counts, "replacements": total}
	if e.call.DryRun {
		return writeResult(true, fmt.Sprintf("Would replace %s in %s:\n%s", plural(total, "match"), plural(len(changes), "file"), countList(counts)), summary, diff.String(), files, extra), nil
	}

	var written []string
	for i, c := range changes {
		if err := e.ctx.Err(); err != nil {
			return partial(written, changes[i:], "the call was cancelled"), nil
		}
		r := resolved[i]
		err := e.replaceOne(r, c)
		if err != nil {
			res, gerr := writeErr(r, err)
			why := err.Error()
			if res != nil {
				why = text(res)
			} else if gerr != nil {
				why = gerr.Error()
			}
			return partial(written, changes[i:], why), nil
		}
		written = append(written, c.rel)
	}
	t, _ := capText(diff.String(), maxDiffText)
	body := fmt.Sprintf("Replaced %s in %s:\n%s\n%s", plural(total, "match"), plural(len(changes), "file"), countList(counts), t)
	return writeResult(false, body, summary, diff.String(), files, extra), nil
}

// replaceOne writes one file's change, if the file still holds the content
// the change was computed from.
func (e *env) replaceOne(r *pathclass.Resolved, c *replaced) error {
	dir, err := e.pinDir(r.Rel, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	base := path.Base(r.Rel)
	check := func() error {
		now, _, err := current(dir, base, r.Info)
		if err != nil {
			return err
		}
		if sha(now) != c.beforeSum {
			return errChanged
		}
		return nil
	}
	if err := check(); err != nil {
		return err
	}
	uid, gid := owner(r.Info)
	return writeAtomic(dir, base, c.after, writeOptions{mode: keptMode(r.Info.Mode()), uid: uid, gid: gid, check: check})
}

func countList(counts []FileCount) string {
	var sb strings.Builder
	for _, c := range counts {
		fmt.Fprintf(&sb, "  %s: %d\n", c.Path, c.Count)
	}
	return sb.String()
}

// partial reports a replacement that stopped part way: which files were
// written (each whole), which failed, which were not touched.
func partial(written []string, rest []*replaced, why string) *sdk.Result {
	var sb strings.Builder
	fmt.Fprintf(&sb, "replaceInProject stopped at %s: %s\n", rest[0].rel, why)
	if len(written) > 0 {
		fmt.Fprintf(&sb, "Already changed (each file whole): %s\n", strings.Join(written, ", "))
	} else {
		sb.WriteString("No file was changed.\n")
	}
	var left []string
	for _, c := range rest {
		left = append(left, c.rel)
	}
	fmt.Fprintf(&sb, "Not changed: %s\n", strings.Join(left, ", "))
	r := sdk.Errorf("%s", sb.String())
	r.Details = map[string]any{"written": written, "notWritten": left}
	return r
}

// text returns the text of a result.
func text(r *sdk.Result) string {
	var sb strings.Builder
	for _, c := range r.Content {
		sb.WriteString(c.Text)
	}
	return sb.String()
}
