package strictjson

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// toAny converts a tree to the values encoding/json produces.
func toAny(n *Node) any {
	switch n.Kind {
	case Null:
		return nil
	case Bool:
		return n.Bool
	case Number:
		return json.Number(n.Num)
	case String:
		return n.Str
	case Array:
		out := []any{}
		for _, e := range n.Elems {
			out = append(out, toAny(e))
		}
		return out
	}
	out := map[string]any{}
	for _, m := range n.Members {
		out[m.Key] = toAny(m.Value)
	}
	return out
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{"a": 1, "a": 2}`, `duplicate key "a" at the top level`},
		{`{"h": {"x": 1, "x": 2}}`, `duplicate key "x" in "h"`},
		{`{"a": "x` + "\xff" + `"}`, `invalid UTF-8 in the value of "a"`},
		{`{"a` + "\xff" + `": 1}`, `invalid UTF-8 in a top-level key`},
		{`{"a": ["ok", "\u0000"]}`, `NUL character in the value of "a[1]"`},
		{`{"a": "` + "\x01" + `"}`, `control character`},
		{`{"a": 1,}`, `expected a key`},
		{`{"a": [1,]}`, `expected a value`},
		{`{"a": 01}`, `expected ',' or '}'`},
		{`{"a": tru}`, `invalid literal`},
		{`{"a": "\x"}`, `invalid escape`},
		{`{"a": "\ud800"}`, `unpaired UTF-16 surrogate`},
		{`{"a": 1} {}`, `after the top-level value`},
		{`{'a': 1}`, `expected a key`},
		{`{"a": 1`, `expected ',' or '}'`},
		{``, `unexpected end of file`},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), "nesting deeper than 64"},
	}
	for _, tc := range cases {
		_, errs := Parse([]byte(tc.src), Limits{MaxDepth: 64, MaxBytes: 1 << 20})
		found := false
		for _, e := range errs {
			found = found || strings.Contains(e.Msg, tc.want)
		}
		if !found {
			t.Errorf("%q: want %q, got %v", tc.src, tc.want, errs)
		}
	}
	if _, errs := Parse([]byte(`{"a": "`+strings.Repeat("x", 100)+`"}`), Limits{MaxBytes: 50}); len(errs) != 1 || !strings.Contains(errs[0].Msg, "over the limit") {
		t.Errorf("size limit: %v", errs)
	}
}

func TestPositions(t *testing.T) {
	src := []byte("{\n  \"é\": 1,\n  \"b\": [true, null]\n}")
	root, errs := Parse(src, Limits{})
	if errs != nil {
		t.Fatal(errs)
	}
	l := NewLines(src)
	b := root.Member("b")
	if line, col := l.Position(b.KeyStart); line != 3 || col != 3 {
		t.Errorf("key b at %d:%d", line, col)
	}
	if line, col := l.Position(b.Value.Elems[1].Start); line != 3 || col != 15 {
		t.Errorf("null at %d:%d", line, col)
	}
	// Columns count characters: the value after "é" is at column 8, not 9.
	if line, col := l.Position(root.Members[0].Value.Start); line != 2 || col != 8 {
		t.Errorf("1 at %d:%d", line, col)
	}
	if string(src[b.Value.Start:b.Value.End]) != "[true, null]" {
		t.Errorf("span %q", src[b.Value.Start:b.Value.End])
	}
}

// FuzzAgainstEncodingJSON: whatever strictjson accepts, encoding/json accepts
// with the same value; whatever encoding/json rejects, strictjson rejects.
func FuzzAgainstEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5e3,-0,true,false,null]}`, `"\u00e9\ud83d\ude00"`, `[{"x":"y"},"\n\t\/"]`, `{"a":1,"a":2}`, "\"\xff\"", `1e`, ` [ ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, errs := Parse(data, Limits{MaxDepth: 1000})
		var want any
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		stdErr := dec.Decode(&want)
		if stdErr == nil && dec.More() {
			stdErr = dec.Decode(new(any))
			if stdErr == nil {
				stdErr = errTrailing
			}
		}
		if root == nil || len(errs) > 0 {
			return // rejecting more than encoding/json is the point
		}
		if stdErr != nil && utf8.Valid(data) {
			t.Fatalf("strictjson accepted what encoding/json rejects (%v): %q", stdErr, data)
		}
		if stdErr == nil && !reflect.DeepEqual(toAny(root), want) {
			t.Fatalf("values differ for %q:\n%#v\n%#v", data, toAny(root), want)
		}
	})
}

var errTrailing = &json.SyntaxError{}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.json"), make([]byte, 11), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(dir)
	if b, err := ReadFile(fsys, "ok.json", 10); err != nil || string(b) != "{}" {
		t.Errorf("ok: %q %v", b, err)
	}
	if _, err := ReadFile(fsys, "big.json", 10); err == nil || !strings.Contains(err.Error(), "over the limit of 10 bytes") {
		t.Errorf("big: %v", err)
	}
	if _, err := ReadFile(fsys, "d.json", 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("dir: %v", err)
	}
}
