package files

import (
	"slices"
	"strings"
)

// maxFuzzyWork bounds the line comparisons of closestRegion.
const maxFuzzyWork = 2_000_000

// region is a window of lines of a file (1-based, inclusive).
type region struct {
	start, end int
	score      float64 // mean line similarity, 0..1
	trimEqual  bool    // every line equal once trimmed
}

// closestRegion finds the window of len(oldString's lines) lines of body
// most similar to oldString, comparing line by line with leading and
// trailing white space trimmed (a bigram Dice coefficient per line).
func closestRegion(body, old string) region {
	file := splitTrim(strings.TrimSuffix(body, "\n"))
	want := splitTrim(strings.TrimSuffix(old, "\n"))
	n := len(want)
	if n == 0 || len(file) == 0 {
		return region{}
	}
	if n > len(file) {
		n = len(file)
		want = want[:n]
	}
	// Candidate starts: every one when the work is small; otherwise the
	// windows that align a line equal to one of oldString's.
	var starts []int
	if (len(file)-n+1)*n <= maxFuzzyWork {
		for i := 0; i+n <= len(file); i++ {
			starts = append(starts, i)
		}
	} else {
		idx := map[string][]int{}
		for j, l := range want {
			if len(l) >= 4 {
				idx[l] = append(idx[l], j)
			}
		}
		seen := map[int]bool{}
		for k, l := range file {
			for _, j := range idx[l] {
				if s := k - j; s >= 0 && s+n <= len(file) && !seen[s] {
					seen[s] = true
					starts = append(starts, s)
				}
			}
			if len(starts)*n > maxFuzzyWork {
				break
			}
		}
		slices.Sort(starts)
	}
	wantP := make([][]uint32, n)
	for j := range want {
		wantP[j] = bigrams(want[j])
	}
	fileP := make(map[int][]uint32)
	prof := func(k int) []uint32 {
		p, ok := fileP[k]
		if !ok {
			p = bigrams(file[k])
			fileP[k] = p
		}
		return p
	}
	best := region{score: -1}
	for _, s := range starts {
		sum := 0.0
		eq := true
		for j := 0; j < n; j++ {
			a, b := file[s+j], want[j]
			if a == b {
				sum++
				continue
			}
			eq = false
			sum += dice(prof(s+j), wantP[j])
		}
		score := sum / float64(n)
		if score > best.score {
			best = region{start: s + 1, end: s + n, score: score, trimEqual: eq}
		}
	}
	if best.score < 0 {
		return region{}
	}
	return best
}

func splitTrim(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}

// bigrams returns the sorted byte bigrams of s.
func bigrams(s string) []uint32 {
	if len(s) < 2 {
		if s == "" {
			return nil
		}
		return []uint32{uint32(s[0]) << 16}
	}
	out := make([]uint32, len(s)-1)
	for i := 0; i+1 < len(s); i++ {
		out[i] = uint32(s[i])<<8 | uint32(s[i+1])
	}
	slices.Sort(out)
	return out
}

// dice is the Dice coefficient of two sorted bigram multisets.
func dice(a, b []uint32) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}
