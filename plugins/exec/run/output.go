package run

import (
	"fmt"
	"unicode/utf8"
)

// capture keeps the first headCap bytes written and the last tailCap bytes
// (a ring), and counts the rest: it never holds more than the cap.
type capture struct {
	headCap, tailCap int
	head             []byte
	tail             []byte // ring of tailCap bytes, allocated on first use
	tpos             int    // next write position in tail
	tlen             int    // bytes held in tail
	total            int64
}

func newCapture(limit int) *capture {
	return &capture{headCap: limit / 2, tailCap: limit - limit/2}
}

func (c *capture) write(p []byte) {
	c.total += int64(len(p))
	if room := c.headCap - len(c.head); room > 0 {
		if c.head == nil {
			c.head = make([]byte, 0, c.headCap)
		}
		n := min(room, len(p))
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 || c.tailCap == 0 {
		return
	}
	if c.tail == nil {
		c.tail = make([]byte, c.tailCap)
	}
	if len(p) >= c.tailCap {
		copy(c.tail, p[len(p)-c.tailCap:])
		c.tpos, c.tlen = 0, c.tailCap
		return
	}
	n := copy(c.tail[c.tpos:], p)
	copy(c.tail, p[n:])
	c.tpos = (c.tpos + len(p)) % c.tailCap
	c.tlen = min(c.tlen+len(p), c.tailCap)
}

// result returns the output to report and the number of bytes left out.
func (c *capture) result() ([]byte, int64) {
	var tail []byte
	if c.tlen < c.tailCap {
		tail = c.tail[:c.tlen] // never wrapped: it starts at 0
	} else {
		tail = append(append(make([]byte, 0, c.tailCap), c.tail[c.tpos:]...), c.tail[:c.tpos]...)
	}
	head := c.head
	if c.total == int64(len(head)+len(tail)) {
		return append(append(make([]byte, 0, len(head)+len(tail)), head...), tail...), 0
	}
	head = trimSplitRuneEnd(head)
	tail = trimSplitRuneStart(tail)
	elided := c.total - int64(len(head)) - int64(len(tail))
	mark := fmt.Sprintf("\n… [%d bytes elided] …\n", elided)
	out := make([]byte, 0, len(head)+len(mark)+len(tail))
	out = append(append(append(out, head...), mark...), tail...)
	return out, elided
}

// trimSplitRuneEnd drops an incomplete UTF-8 sequence cut at the end of b.
func trimSplitRuneEnd(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// trimSplitRuneStart drops the continuation bytes of a UTF-8 sequence cut at
// the start of b (at most three; four or more in a row is not UTF-8 text, and
// b is left alone).
func trimSplitRuneStart(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	if len(b) < utf8.UTFMax {
		return nil // nothing but the end of a cut sequence
	}
	return b
}
