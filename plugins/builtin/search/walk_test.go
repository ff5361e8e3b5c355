package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opair-dev/opair/internal/gitignore"
)

func mkTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for n, v := range files {
		p := filepath.Join(root, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if target, ok := strings.CutPrefix(v, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func walkAll(t *testing.T, w *Walker) []string {
	t.Helper()
	var out []string
	if _, err := w.Walk(context.Background(), func(e *Entry) error {
		out = append(out, e.Rel)
		e.Done()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWalk(t *testing.T) {
	root := mkTree(t, map[string]string{
		"b.txt": "", "a/x": "", "a-b/y": "", "a/c/d": "",
		".hidden/h": "", ".env": "", ".git/config": "", "sub/.git/x": "", ".GIT/y": "",
		".gitignore": "ign/\n*.log\n", "ign/i": "", "z.log": "",
		"link": "->b.txt", "dirlink": "->a", "out": "->/etc",
	})
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ign := gitignore.New(root, gitignore.Options{})
	tests := []struct {
		name string
		w    Walker
		want string
	}{
		{"default", Walker{Root: r, Ignore: ign}, "a/c/d a/x a-b/y b.txt"},
		{"hidden", Walker{Root: r, Ignore: ign, IncludeHidden: true}, ".env .gitignore .hidden/h a/c/d a/x a-b/y b.txt"},
		{"ignored", Walker{Root: r, Ignore: ign, IncludeIgnored: true}, "a/c/d a/x a-b/y b.txt ign/i z.log"},
		{"both", Walker{Root: r, Ignore: ign, IncludeHidden: true, IncludeIgnored: true}, ".env .gitignore .hidden/h a/c/d a/x a-b/y b.txt ign/i z.log"},
		{"glob", Walker{Root: r, Ignore: ign, Glob: "a/**"}, "a/c/d a/x"},
		{"glob top", Walker{Root: r, Ignore: ign, Glob: "*.txt"}, "b.txt"},
		{"max entries", Walker{Root: r, Ignore: ign, MaxEntries: 3}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(walkAll(t, &tt.w), " ")
			if tt.name == "max entries" {
				if len(strings.Fields(got)) > 3 {
					t.Errorf("too many: %s", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	// Stopping with an error.
	stop := errors.New("stop")
	n := 0
	_, err = (&Walker{Root: r}).Walk(context.Background(), func(e *Entry) error { e.Done(); n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("stop: %v %d", err, n)
	}
	// Cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Walker{Root: r}).Walk(ctx, func(e *Entry) error { e.Done(); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
}

// TestEntryOpenRefusesLink: a file swapped for a link after the listing is
// not opened.
func TestEntryOpenRefusesLink(t *testing.T) {
	root := mkTree(t, map[string]string{"f": "x", ".env": "secret"})
	r, _ := os.OpenRoot(root)
	defer r.Close()
	var entries []*Entry
	(&Walker{Root: r}).Walk(context.Background(), func(e *Entry) error { entries = append(entries, e); return nil })
	if len(entries) != 1 {
		t.Fatalf("entries %v", entries)
	}
	os.Remove(filepath.Join(root, "f"))
	os.Symlink(".env", filepath.Join(root, "f"))
	if f, err := entries[0].Open(); err == nil {
		f.Close()
		t.Error("opened a link")
	}
	entries[0].Done()
}

func TestScanOrderAndStop(t *testing.T) {
	files := map[string]string{}
	var want []string
	for _, d := range []string{"a", "b", "c", "d"} {
		for _, f := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
			rel := d + "/" + f
			files[rel] = rel + "\n"
			want = append(want, rel)
		}
	}
	files["bin"] = "x\x00"
	files["big"] = strings.Repeat("x", 2000)
	root := mkTree(t, files)
	r, _ := os.OpenRoot(root)
	defer r.Close()
	for i := 0; i < 20; i++ {
		var got []string
		var mu sync.Mutex
		st, err := Scan(context.Background(), &Walker{Root: r}, ScanOptions{Workers: 8, MaxFileSize: 1000, Window: 3},
			func(rel string, data []byte) string { return string(data) },
			func(rel string, v string) bool {
				mu.Lock()
				defer mu.Unlock()
				if v != rel+"\n" {
					t.Errorf("%s got %q", rel, v)
				}
				got = append(got, rel)
				return true
			})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("order %v", got)
		}
		if st.Binary != 1 || st.Large != 1 || st.Read != 32 {
			t.Errorf("stats %+v", st)
		}
	}
	n := 0
	_, err := Scan(context.Background(), &Walker{Root: r}, ScanOptions{Workers: 4},
		func(rel string, data []byte) int { return 1 },
		func(rel string, v int) bool { n++; return n < 5 })
	if err != nil || n != 5 {
		t.Errorf("stop: %v %d", err, n)
	}
}

// TestScanReads: contents arrive whole around the first chunk's size; a NUL
// byte anywhere, in the first chunk or after it, makes a file binary.
func TestScanReads(t *testing.T) {
	text := func(n int) string {
		var sb strings.Builder
		for i := 0; sb.Len() < n; i++ {
			fmt.Fprintf(&sb, "line %d\n", i)
		}
		return sb.String()[:n]
	}
	files := map[string]string{"empty": ""}
	for _, n := range []int{1, firstChunk - 1, firstChunk, firstChunk + 1, 3*firstChunk + 17} {
		files[fmt.Sprintf("t%d", n)] = text(n)
	}
	files["late.bin"] = text(2*firstChunk) + "\x00" + text(10)
	files["edge.bin"] = text(firstChunk-1) + "\x00" + text(firstChunk)
	files["next.bin"] = text(firstChunk) + "\x00"
	files["early.bin"] = "\x00" + text(4*firstChunk)
	root := mkTree(t, files)
	r, _ := os.OpenRoot(root)
	defer r.Close()
	for round := 0; round < 3; round++ { // pooled buffers, reused
		got := map[string]string{}
		st, err := Scan(context.Background(), &Walker{Root: r}, ScanOptions{},
			func(rel string, data []byte) string { return string(data) },
			func(rel string, v string) bool { got[rel] = v; return true })
		if err != nil {
			t.Fatal(err)
		}
		if st.Binary != 4 || st.Read != 6 {
			t.Errorf("stats %+v", st)
		}
		for name, want := range files {
			if strings.HasSuffix(name, ".bin") {
				if _, ok := got[name]; ok {
					t.Errorf("%s searched", name)
				}
				continue
			}
			if got[name] != want {
				t.Errorf("%s: %d bytes, want %d", name, len(got[name]), len(want))
			}
		}
	}
}
