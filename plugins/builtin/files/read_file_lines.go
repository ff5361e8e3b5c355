package files

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/opair-dev/opair/sdk"
)

const (
	// defaultLineCount is how many lines a call returns at most (and without
	// an end).
	defaultLineCount = 2000
	// maxLinesOutput bounds the text one call returns.
	maxLinesOutput = 256 << 10
	// maxLinesScan bounds how far a file is read to count its lines.
	maxLinesScan = 1 << 30
	// keepLine is how many bytes of a line are kept for display: enough for
	// maxLineRunes characters of any width.
	keepLine = 4*maxLineRunes + 4
)

type readLinesArgs struct {
	Path  string `json:"path"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// nextLine reads one line from br; it keeps at most keep bytes of it (without
// its "\n") and returns its full length. ok is false at the end of input.
func nextLine(br *bufio.Reader, buf []byte, keep int) (kept []byte, full int, ok bool, err error) {
	kept = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		full += len(chunk)
		if n := min(len(chunk), keep-len(kept)); n > 0 {
			kept = append(kept, chunk[:n]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			return bytes.TrimSuffix(kept, []byte{'\n'}), full, full > 0, nil
		}
		if err != nil {
			return nil, 0, false, err
		}
		return bytes.TrimSuffix(kept, []byte{'\n'}), full, true, nil
	}
}

func readFileLines(e *env) (*sdk.Result, error) {
	var a readLinesArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	switch {
	case a.Start < 0:
		return sdk.Errorf("start must be 1 or more (lines are numbered from 1), not %d", a.Start), nil
	case a.End < 0:
		return sdk.Errorf("end must be 1 or more (lines are numbered from 1), not %d", a.End), nil
	}
	if a.Start == 0 {
		a.Start = 1
	}
	if a.End == 0 {
		a.End = a.Start + defaultLineCount - 1
	}
	if a.End < a.Start {
		return sdk.Errorf("end (%d) is less than start (%d); the range is inclusive: start %d and end %d return one line", a.End, a.Start, a.Start, a.Start), nil
	}
	last := min(a.End, a.Start+defaultLineCount-1)

	r, res, err := e.resolveExisting(a.Path, wantFile)
	if r == nil {
		return res, err
	}
	name := displayRel(r)
	f, err := e.open(r)
	if err != nil {
		return openErr(r, err)
	}
	defer f.Close()
	h := sha256.New()
	lim := &io.LimitedReader{R: f, N: maxLinesScan}
	br := bufio.NewReaderSize(io.TeeReader(lim, h), 64<<10)
	head, _ := br.Peek(sniffLen + 4)
	if why := binaryReason(head); why != "" {
		return sdk.Errorf("%s looks binary (%s): read its bytes with %s", name, why, sibling(strings.TrimSuffix(e.call.Tool, "Lines"), "Bytes", "readFileBytes")), nil
	}

	var out strings.Builder
	consumed, shownTo := 0, 0 // lines read; last line shown
	capped, crlf := false, false
	buf := make([]byte, 0, keepLine)
	for consumed < last {
		kept, _, ok, err := nextLine(br, buf, keepLine)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if !ok {
			break
		}
		consumed++
		if consumed < a.Start {
			continue
		}
		text := string(kept)
		if strings.HasSuffix(text, "\r") {
			text, crlf = strings.TrimSuffix(text, "\r"), true
		}
		// A line longer than keepLine bytes has more than maxLineRunes
		// characters, so cutLine cuts it.
		cut := cutLine(text, maxLineRunes)
		if out.Len()+len(cut) > maxLinesOutput && shownTo > 0 {
			capped = true
			break
		}
		out.WriteString(numbered(consumed, cut))
		shownTo = consumed
	}
	// Count the lines not read yet: each "\n", and a last line without one.
	total := consumed
	chunk := make([]byte, 64<<10)
	var restLen int64
	var lastByte byte
	for {
		n, err := br.Read(chunk)
		if n > 0 {
			total += bytes.Count(chunk[:n], []byte{'\n'})
			restLen += int64(n)
			lastByte = chunk[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
	}
	if restLen > 0 && lastByte != '\n' {
		total++
	}
	scanCut := false
	if lim.N == 0 { // the scan limit was reached: is there more?
		n, _ := f.Read(make([]byte, 1))
		scanCut = n > 0
	}
	return linesResult(name, r.Class.String(), &out, a.Start, shownTo, total, capped, crlf, scanCut, h.Sum(nil))
}

func linesResult(name, class string, out *strings.Builder, start, shownTo, total int, capped, crlf, scanCut bool, sum []byte) (*sdk.Result, error) {
	totalText := fmt.Sprint(total)
	if scanCut {
		totalText = fmt.Sprintf("more than %d", total)
	}
	det := map[string]any{"path": name, "class": class, "start": start, "end": shownTo, "totalLines": total}
	if scanCut {
		det["totalLinesAtLeast"] = true
	} else {
		det["sha256"] = hex.EncodeToString(sum)
	}
	if crlf {
		det["lineEndings"] = "crlf"
	}
	if total == 0 {
		det["start"], det["end"] = 0, 0
		return &sdk.Result{Content: []sdk.Content{{Text: "(empty file: 0 lines)"}}, Summary: "read 0 lines of " + name, Details: det}, nil
	}
	if shownTo == 0 {
		return sdk.Errorf("start %d is past the end of %s, which has %s lines", start, name, totalText), nil
	}
	if shownTo < total || scanCut {
		fmt.Fprintf(out, "(lines %d-%d of %s in %s", start, shownTo, totalText, name)
		if capped {
			fmt.Fprintf(out, "; output cut at %d bytes", maxLinesOutput)
		}
		fmt.Fprintf(out, "; read more with start=%d)\n", shownTo+1)
	} else {
		fmt.Fprintf(out, "(lines %d-%d of %d in %s: end of file)\n", start, shownTo, total, name)
	}
	return &sdk.Result{
		Content: []sdk.Content{{Text: out.String()}},
		Summary: fmt.Sprintf("read %s of %s", plural(shownTo-start+1, "line"), name),
		Details: det,
	}, nil
}
