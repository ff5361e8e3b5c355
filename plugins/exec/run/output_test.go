package run

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// The capture keeps exactly the first and last bytes, whatever the chunking.
func TestCaptureMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 500; round++ {
		limit := 1 + rng.IntN(64)
		c := newCapture(limit)
		var all []byte
		for w := rng.IntN(20); w > 0; w-- {
			p := make([]byte, rng.IntN(40))
			for i := range p {
				p[i] = 'a' + byte(rng.IntN(26))
			}
			all = append(all, p...)
			c.write(p)
		}
		got, elided := c.result()
		want := all
		if len(all) > limit {
			h, tl := limit/2, limit-limit/2
			want = []byte(string(all[:h]) + fmt.Sprintf("\n… [%d bytes elided] …\n", len(all)-limit) + string(all[len(all)-tl:]))
		}
		if !bytes.Equal(got, want) || elided != int64(max(0, len(all)-limit)) || c.total != int64(len(all)) {
			t.Fatalf("limit %d, input %q: got %q (elided %d), want %q", limit, all, got, elided, want)
		}
		if len(c.head)+c.tlen > limit {
			t.Fatalf("held %d bytes over the cap %d", len(c.head)+c.tlen, limit)
		}
	}
}

func TestCaptureKeepsRunesWhole(t *testing.T) {
	in := bytes.Repeat([]byte("é€😀"), 100) // 2, 3 and 4-byte sequences
	for limit := 2; limit < 40; limit++ {
		c := newCapture(limit)
		c.write(in)
		got, elided := c.result()
		if !utf8.Valid(got) {
			t.Fatalf("limit %d: invalid UTF-8 %q", limit, got)
		}
		head, tail, ok := bytes.Cut(got, []byte("\n… ["))
		if !ok {
			t.Fatalf("limit %d: no marker in %q", limit, got)
		}
		_, tail, _ = bytes.Cut(tail, []byte("] …\n"))
		if int64(len(in)-len(head)-len(tail)) != elided {
			t.Fatalf("limit %d: elided %d, but %d bytes are missing", limit, elided, len(in)-len(head)-len(tail))
		}
		if !bytes.HasPrefix(in, head) || !bytes.HasSuffix(in, tail) {
			t.Fatalf("limit %d: head %q / tail %q not from the input", limit, head, tail)
		}
	}
	// Binary output is left alone.
	c := newCapture(8)
	c.write(bytes.Repeat([]byte{0x80}, 100))
	if got, _ := c.result(); !bytes.HasPrefix(got, bytes.Repeat([]byte{0x80}, 4)) || !bytes.HasSuffix(got, bytes.Repeat([]byte{0x80}, 4)) {
		t.Fatalf("binary output changed: %q", got)
	}
}

func TestParseStat(t *testing.T) {
	p, ok := parseStat(42, []byte("42 (a) b (c)) S 1 42 42 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0"))
	if !ok || p.ppid != 1 || p.pgrp != 42 || p.sid != 42 || p.state != 'S' || p.start != 123456 {
		t.Fatalf("parseStat: %+v %v", p, ok)
	}
	if _, ok := parseStat(1, []byte("1 (x")); ok {
		t.Fatal("truncated stat parsed")
	}
}
