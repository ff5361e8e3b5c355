// Package udiff computes line diffs (Myers' O(ND) algorithm) and formats
// them as unified diffs, the form the approval prompt and the model see.
package udiff

import (
	"fmt"
	"strings"
)

// DefaultContext is the number of unchanged lines shown around a change.
const DefaultContext = 3

// maxEdits bounds the work of one diff: beyond this many inserted plus
// deleted lines (after the common head and tail are set aside), the middle
// is reported as one replaced block instead of a minimal edit script.
const maxEdits = 4000

// Kind is the kind of one line of an edit script.
type Kind byte

const (
	Equal  Kind = ' '
	Delete Kind = '-'
	Insert Kind = '+'
)

// Edit is one line of an edit script: A indexes the old lines (Equal,
// Delete), B the new ones (Equal, Insert).
type Edit struct {
	Kind Kind
	A, B int
}

// SplitLines splits s into lines, each keeping its "\n"; a last line without
// one is kept as is. An empty string has no lines.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// Lines returns the edit script turning the lines a into the lines b.
func Lines(a, b []string) []Edit {
	// Lines are compared as small integers.
	ids := make(map[string]int, len(a)+len(b))
	id := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			v, ok := ids[l]
			if !ok {
				v = len(ids)
				ids[l] = v
			}
			out[i] = v
		}
		return out
	}
	ia, ib := id(a), id(b)
	pre := 0
	for pre < len(ia) && pre < len(ib) && ia[pre] == ib[pre] {
		pre++
	}
	suf := 0
	for suf < len(ia)-pre && suf < len(ib)-pre && ia[len(ia)-1-suf] == ib[len(ib)-1-suf] {
		suf++
	}
	edits := make([]Edit, 0, len(a)+len(b))
	for i := 0; i < pre; i++ {
		edits = append(edits, Edit{Equal, i, i})
	}
	ma, mb := ia[pre:len(ia)-suf], ib[pre:len(ib)-suf]
	mid, ok := myers(ma, mb, maxEdits)
	if !ok {
		mid = mid[:0]
		for i := range ma {
			mid = append(mid, Edit{Delete, i, 0})
		}
		for j := range mb {
			mid = append(mid, Edit{Insert, len(ma), j})
		}
	}
	for _, e := range mid {
		edits = append(edits, Edit{e.Kind, e.A + pre, e.B + pre})
	}
	for i := 0; i < suf; i++ {
		edits = append(edits, Edit{Equal, len(ia) - suf + i, len(ib) - suf + i})
	}
	return edits
}

// myers returns a shortest edit script from a to b, or false when it needs
// more than maxD edits. Memory is O(D²).
func myers(a, b []int, maxD int) ([]Edit, bool) {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil, true
	}
	var trace [][]int // trace[d][k+d] = furthest x on diagonal k after d edits
	found := -1
	for d := 0; d <= maxD && d <= n+m; d++ {
		v := make([]int, 2*d+1)
		var prev []int
		if d > 0 {
			prev = trace[d-1]
		}
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]):
				x = prev[k+1+d-1] // down: an insertion
			default:
				x = prev[k-1+d-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[k+d] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
		trace = append(trace, v)
		if found >= 0 {
			break
		}
	}
	if found < 0 {
		return nil, false
	}
	var rev []Edit
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1]
		k := x - y
		var pk int
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev[pk+d-1]
		py := px - pk
		mx, my := px+1, py // after a deletion
		if pk == k+1 {
			mx, my = px, py+1 // after an insertion
		}
		for x > mx && y > my {
			x--
			y--
			rev = append(rev, Edit{Equal, x, y})
		}
		if pk == k+1 {
			rev = append(rev, Edit{Insert, px, py})
		} else {
			rev = append(rev, Edit{Delete, px, py})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, Edit{Equal, x, y})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true
}

// Unified returns the unified diff turning old into new, with the given
// file names in its header ("a/x.go", "b/x.go", or "/dev/null"), or "" when
// they are equal. context < 0 means DefaultContext.
func Unified(oldName, newName, old, new string, context int) string {
	if old == new {
		return ""
	}
	if context < 0 {
		context = DefaultContext
	}
	a, b := SplitLines(old), SplitLines(new)
	edits := Lines(a, b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(edits, context) {
		writeHunk(&sb, a, b, edits[h[0]:h[1]])
	}
	return sb.String()
}

// hunks groups the edits into [start, end) ranges of changes with their
// context, merging changes closer than 2×context lines.
func hunks(edits []Edit, context int) [][2]int {
	var out [][2]int
	i := 0
	for i < len(edits) {
		for i < len(edits) && edits[i].Kind == Equal {
			i++
		}
		if i == len(edits) {
			break
		}
		start := max(0, i-context)
		end := i
		for {
			for end < len(edits) && edits[end].Kind != Equal {
				end++
			}
			run := end
			for run < len(edits) && edits[run].Kind == Equal {
				run++
			}
			if run < len(edits) && run-end <= 2*context {
				end = run
				continue
			}
			end = min(end+context, len(edits))
			break
		}
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

func writeHunk(sb *strings.Builder, a, b []string, edits []Edit) {
	var la, lb int
	sa, sb0 := -1, -1
	for _, e := range edits {
		switch e.Kind {
		case Equal:
			la++
			lb++
		case Delete:
			la++
		case Insert:
			lb++
		}
		if sa < 0 && e.Kind != Insert {
			sa = e.A
		}
		if sb0 < 0 && e.Kind != Delete {
			sb0 = e.B
		}
	}
	if sa < 0 { // only insertions: the position is where they go
		sa = edits[0].A
	}
	if sb0 < 0 {
		sb0 = edits[0].B
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", rng(sa, la), rng(sb0, lb))
	for _, e := range edits {
		var line string
		switch e.Kind {
		case Equal, Delete:
			line = a[e.A]
		case Insert:
			line = b[e.B]
		}
		sb.WriteByte(byte(e.Kind))
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// rng formats a hunk range: start is 0-based; an empty range names the line
// before it.
func rng(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
