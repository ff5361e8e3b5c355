// Package diag holds what Opair's strict file formats (tool files, the
// configuration) share for reporting: a diagnostic with its file, line and
// column and a hint that says how to fix it, a list of them that is an
// error, and the nearest-valid-field suggestion. It imports neither the host
// nor the plugins.
package diag

import (
	"fmt"
	"strings"
)

// Diagnostic is one problem at one place of a file.
type Diagnostic struct {
	File      string
	Line, Col int // 1-based; Line 0 when the problem is the whole file
	Msg       string
	Hint      string
}

func (d Diagnostic) String() string {
	s := fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Msg)
	if d.Line == 0 {
		s = fmt.Sprintf("%s: %s", d.File, d.Msg)
	}
	if d.Hint != "" {
		s += "\n\thint: " + d.Hint
	}
	return s
}

// Errors is every diagnostic of a load; it is returned as the error of a
// load that found any.
type Errors []Diagnostic

func (e Errors) Error() string {
	var b strings.Builder
	for i, d := range e {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// Files returns the distinct files named by the diagnostics, in order.
func (e Errors) Files() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range e {
		if !seen[d.File] {
			seen[d.File] = true
			out = append(out, d.File)
		}
	}
	return out
}

// CaseVariant returns the allowed word that key equals but for case, or "".
func CaseVariant(key string, allowed []string) string {
	for _, a := range allowed {
		if strings.EqualFold(a, key) {
			return a
		}
	}
	return ""
}

// Nearest returns the allowed word closest to w by edit distance (case
// ignored), if it is close enough to be a likely typo, or "".
func Nearest(w string, allowed []string) string {
	best, bestD := "", 1<<30
	lw := strings.ToLower(w)
	for _, a := range allowed {
		d := editDistance(lw, strings.ToLower(a))
		if d < bestD {
			best, bestD = a, d
		}
	}
	if bestD <= max(2, len(w)/3) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
