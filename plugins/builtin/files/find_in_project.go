package files

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/opair-dev/opair/plugins/builtin/search"
	"github.com/opair-dev/opair/sdk"
)

const (
	// defaultMaxResults is the result cap without maxResults.
	defaultMaxResults = 200
	// maxMaxResults bounds maxResults.
	maxMaxResults = 1_000_000
	// maxMatchRunes is where a matching line is cut in the output.
	maxMatchRunes = 500
)

type findArgs struct {
	Pattern         string `json:"pattern"`
	Glob            string `json:"glob"`
	Literal         bool   `json:"literal"`
	CaseInsensitive bool   `json:"caseInsensitive"`
	MaxResults      int    `json:"maxResults"`
	// ExcludePaths are added by the host, not the model: the globs of the
	// user's deny rules on paths, which the search must not enter.
	ExcludePaths []string `json:"excludePaths"`
}

// maxOutputBytes bounds the text of the matches shown, well inside the
// protocol's message size (wire.MaxMessageBytes); matches past it are
// counted as not shown. A variable for the tests.
var maxOutputBytes = 32 << 20

// fileMatches are the matches of one file: the first ones formatted as
// output lines ("path:line:text\n"), all counted.
type fileMatches struct {
	text  *[]byte // from matchBufs; nil: none kept
	kept  int     // lines in text
	count int
}

// matchBufs recycle the workers' formatting buffers.
var matchBufs = sync.Pool{New: func() any { return new([]byte) }}

// writeGrow appends b to out, growing it by doubling without the zeroing
// append would do.
func writeGrow(out *strings.Builder, b []byte) {
	if out.Cap()-out.Len() < len(b) {
		out.Grow(max(len(b), out.Cap()))
	}
	out.Write(b)
}

// appendMatch formats one match as an output line.
func appendMatch(b []byte, rel string, line int, text []byte) []byte {
	b = append(b, rel...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(line), 10)
	b = append(b, ':')
	text = bytes.TrimSuffix(text, []byte("\r"))
	if len(text) <= maxMatchRunes {
		b = append(b, text...)
	} else {
		b = append(b, cutLine(string(text), maxMatchRunes)...)
	}
	return append(b, '\n')
}

// firstLines is the part of text holding its first n lines.
func firstLines(text []byte, n int) []byte {
	end := 0
	for ; n > 0; n-- {
		end += bytes.IndexByte(text[end:], '\n') + 1
	}
	return text[:end]
}

func (e *env) walker(glob string, exclude []string) *search.Walker {
	return &search.Walker{
		Root:           e.res.Root(),
		Ignore:         e.ign,
		IncludeHidden:  e.h.IncludeHidden,
		IncludeIgnored: e.h.IncludeIgnored,
		Glob:           glob,
		Exclude:        exclude,
	}
}

func findInProject(e *env) (*sdk.Result, error) {
	var a findArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	if a.Pattern == "" && a.Glob == "" {
		return sdk.Errorf("give a pattern to search file contents, or a glob (alone) to list file names"), nil
	}
	if a.MaxResults < 0 {
		return sdk.Errorf("maxResults must be 1 or more, not %d", a.MaxResults), nil
	}
	limit := a.MaxResults
	if limit == 0 {
		limit = defaultMaxResults
	}
	limit = min(limit, maxMaxResults)
	if a.Glob != "" {
		if err := search.ValidateGlob(a.Glob); err != nil {
			return sdk.Errorf("%v: use doublestar syntax over the path relative to the project root, e.g. \"**/*.go\" or \"cmd/**\"", err), nil
		}
	}
	w := e.walker(a.Glob, a.ExcludePaths)
	if a.Pattern == "" {
		return findFiles(e, w, a, limit)
	}
	m, err := search.NewMatcher(a.Pattern, a.Literal, a.CaseInsensitive)
	if err != nil {
		return sdk.Errorf("invalid pattern %q: %v (Go regexp syntax: no backreferences or lookaround; set literal to search plain text)", a.Pattern, err), nil
	}
	_ = e.prog.Status("searching for " + a.Pattern)

	// Workers format the matches of their files; the collector, in walk
	// order, keeps them up to the cap and counts the rest.
	var full atomic.Bool // the cap is reached: workers only count
	var out strings.Builder
	shown, total, files := 0, 0, 0
	st, err := search.Scan(e.ctx, w, search.ScanOptions{},
		func(rel string, data []byte) fileMatches {
			var fm fileMatches
			keep := !full.Load()
			m.FindLines(data, func(line int, text []byte) bool {
				fm.count++
				if keep && fm.kept < limit {
					if fm.text == nil {
						fm.text = matchBufs.Get().(*[]byte)
					}
					*fm.text = appendMatch(*fm.text, rel, line, text)
					fm.kept++
				}
				return true
			})
			return fm
		},
		func(rel string, fm fileMatches) bool {
			if fm.text != nil {
				defer func() {
					if cap(*fm.text) <= 1<<20 {
						*fm.text = (*fm.text)[:0]
						matchBufs.Put(fm.text)
					}
				}()
			}
			if fm.count == 0 {
				return true
			}
			files++
			total += fm.count
			if shown < limit && !full.Load() && fm.text != nil {
				n := min(fm.kept, limit-shown)
				text := *fm.text
				if n < fm.kept {
					text = firstLines(text, n)
				}
				if room := maxOutputBytes - out.Len(); len(text) > room {
					text = text[:bytes.LastIndexByte(text[:room], '\n')+1]
					n = bytes.Count(text, []byte{'\n'})
					full.Store(true)
				}
				writeGrow(&out, text)
				shown += n
				if shown == limit {
					full.Store(true)
				}
			}
			return true
		})
	if err != nil {
		if e.ctx.Err() != nil {
			return nil, e.ctx.Err()
		}
		return nil, fmt.Errorf("searching the project: %w", err)
	}
	if total == 0 {
		out.WriteString("No matches.\n")
		hintGlob(&out, a.Glob)
	}
	if total > shown {
		fmt.Fprintf(&out, "(%s more results not shown: narrow the pattern or the glob)\n", fmt.Sprint(total-shown))
	}
	notes(&out, st)
	return &sdk.Result{
		Content: []sdk.Content{{Text: out.String()}},
		Summary: fmt.Sprintf("%s in %s", plural(total, "match"), plural(files, "file")),
		Details: map[string]any{
			"pattern": a.Pattern, "glob": a.Glob, "literal": a.Literal, "caseInsensitive": a.CaseInsensitive,
			"matches": total, "shown": shown, "files": files, "filesSearched": st.Read,
			"skipped": skippedDetails(st), "truncated": total > shown || st.Truncated,
		},
	}, nil
}

// findFiles lists the files matching a glob.
func findFiles(e *env, w *search.Walker, a findArgs, limit int) (*sdk.Result, error) {
	var out strings.Builder
	shown, total := 0, 0
	st, err := w.Walk(e.ctx, func(ent *search.Entry) error {
		ent.Done()
		total++
		if shown < limit && out.Len()+len(ent.Rel)+1 > maxOutputBytes {
			limit = shown // the byte bound: list no more, count on
		}
		if shown < limit {
			out.WriteString(ent.Rel)
			out.WriteByte('\n')
			shown++
		}
		return nil
	})
	if err != nil {
		if e.ctx.Err() != nil {
			return nil, e.ctx.Err()
		}
		return nil, fmt.Errorf("listing the project: %w", err)
	}
	if total == 0 {
		out.WriteString("No files match.\n")
		hintGlob(&out, a.Glob)
	}
	if total > shown {
		fmt.Fprintf(&out, "(%d more files not shown: narrow the glob)\n", total-shown)
	}
	if st.Truncated {
		out.WriteString("(the walk stopped at its limit; narrow the glob)\n")
	}
	return &sdk.Result{
		Content: []sdk.Content{{Text: out.String()}},
		Summary: fmt.Sprintf("%s match %s", plural(total, "file"), a.Glob),
		Details: map[string]any{"glob": a.Glob, "files": total, "shown": shown, "truncated": total > shown || st.Truncated},
	}, nil
}

func hintGlob(out io.Writer, glob string) {
	if glob != "" && !strings.Contains(glob, "/") {
		fmt.Fprintf(out, "(the glob matches the whole path relative to the project root: %q matches only top-level files; use \"**/%s\" for every directory)\n", glob, glob)
	}
}

// notes tells the model what the search left out.
func notes(out io.Writer, st search.ScanStats) {
	var parts []string
	if st.Binary > 0 {
		parts = append(parts, plural(st.Binary, "binary file"))
	}
	if st.Large > 0 {
		parts = append(parts, fmt.Sprintf("%s over %d MiB", plural(st.Large, "file"), search.DefaultMaxFileSize>>20))
	}
	if st.HardLinked > 0 {
		parts = append(parts, plural(st.HardLinked, "hard-linked file"))
	}
	if st.Unreadable > 0 {
		parts = append(parts, plural(st.Unreadable, "unreadable file"))
	}
	if len(parts) > 0 {
		fmt.Fprintf(out, "(skipped %s)\n", strings.Join(parts, ", "))
	}
	if st.Truncated {
		io.WriteString(out, "(the walk stopped at its limit; narrow the glob)\n")
	}
}

func skippedDetails(st search.ScanStats) map[string]int {
	return map[string]int{"binary": st.Binary, "large": st.Large, "hardLinked": st.HardLinked, "unreadable": st.Unreadable, "unreadableDirs": st.WalkStats.Unreadable}
}
