package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEditFile(t *testing.T) {
	const src = "package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name    string
		file    string
		args    map[string]any
		want    string // the file afterwards
		summary string
	}{
		{"unique", src, map[string]any{"oldString": "func a() {\n\treturn 1", "newString": "func a() {\n\treturn 2"}, strings.Replace(src, "return 1", "return 2", 1), "edited f.go: 1 replacement"},
		{"replaceAll", src, map[string]any{"oldString": "return 1", "newString": "return 3", "replaceAll": true}, strings.ReplaceAll(src, "return 1", "return 3"), "edited f.go: 2 replacements"},
		{"delete text", src, map[string]any{"oldString": "\nfunc b() {\n\treturn 1\n}\n", "newString": ""}, "package main\n\nfunc a() {\n\treturn 1\n}\n", "edited f.go: 1 replacement"},
		{"crlf adapted", "a\r\nb\r\nc\r\n", map[string]any{"oldString": "a\nb\n", "newString": "x\ny\nz\n"}, "x\r\ny\r\nz\r\nc\r\n", ""},
		{"crlf new lines", "a\r\nb\r\n", map[string]any{"oldString": "b", "newString": "b\nc"}, "a\r\nb\r\nc\r\n", ""},
		{"crlf exact", "a\r\nb\r\n", map[string]any{"oldString": "a\r\nb", "newString": "q\r\nr"}, "q\r\nr\r\n", ""},
		{"lf file untouched", "a\nb\n", map[string]any{"oldString": "b", "newString": "b\nc"}, "a\nb\nc\n", ""},
		{"bom kept", "\xEF\xBB\xBFhello\n", map[string]any{"oldString": "hello", "newString": "bye"}, "\xEF\xBB\xBFbye\n", ""},
		{"bom in oldString", "\xEF\xBB\xBFhello\n", map[string]any{"oldString": "\xEF\xBB\xBFhello", "newString": "bye"}, "\xEF\xBB\xBFbye\n", ""},
		{"no final newline", "x = 1", map[string]any{"oldString": "1", "newString": "2"}, "x = 2", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newProject(t, tree{"f.go": tt.file})
			os.Chmod(filepath.Join(root, "f.go"), 0o751)
			args := map[string]any{"path": "f.go"}
			for k, v := range tt.args {
				args[k] = v
			}
			_, res := mustOK(t, root, "editFile", "project", args)
			if got := readFileT(t, filepath.Join(root, "f.go")); got != tt.want {
				t.Errorf("file %q, want %q", got, tt.want)
			}
			if tt.summary != "" && res.Summary != tt.summary {
				t.Errorf("summary %q", res.Summary)
			}
			fi, _ := os.Stat(filepath.Join(root, "f.go"))
			if fi.Mode().Perm() != 0o751 {
				t.Errorf("mode %v", fi.Mode())
			}
			ents, _ := os.ReadDir(root)
			if len(ents) != 1 {
				t.Errorf("leftovers: %v", ents)
			}
			d := details(t, res)
			fc := d["files"].([]any)[0].(map[string]any)
			if fc["before_sha256"] != sha([]byte(tt.file)) || fc["after_sha256"] != sha([]byte(tt.want)) {
				t.Errorf("hashes %v", fc)
			}
		})
	}
}

func TestEditFileErrors(t *testing.T) {
	const src = "package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	root := newProject(t, tree{"f.go": src, "bin": "a\x00b"})
	before := treeHash(t, root)
	// Two matches without replaceAll: both line numbers, file unchanged.
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.go", "oldString": "return 1", "newString": "return 2"},
		"matches 2 times", "lines 4, 8", "replaceAll", "     4\t\treturn 1\n", "     8\t\treturn 1\n")
	// Not found: the closest region with line numbers.
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.go", "oldString": "func b() {\n    return 1\n}", "newString": "x"},
		"not found", "Lines 7-9 match oldString except", "     7\tfunc b() {\n     8\t\treturn 1\n     9\t}\n", "indentation")
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.go", "oldString": "func b() {\n\treturn 2\n}", "newString": "x"},
		"not found", "closest region is lines 7-9", "     7\tfunc b() {\n     8\t\treturn 1\n     9\t}\n")
	// Nothing similar.
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.go", "oldString": "zzzzqqqq", "newString": "x"}, "not found", "No region")
	// Line-number prefixes copied from readFileLines.
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.go", "oldString": "     3\tfunc a() {\n     4\t\treturn 1", "newString": "x"}, "line-number prefixes")
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.go", "oldString": "", "newString": "x"}, "oldString is empty")
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.go", "oldString": "a", "newString": "a"}, "same")
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "nope.go", "oldString": "a", "newString": "b"}, "no such file")
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "bin", "oldString": "a", "newString": "b"}, "binary")
	if treeHash(t, root) != before {
		t.Error("a failed edit changed the tree")
	}
}

func TestEditFileDryRunAndExpect(t *testing.T) {
	root := newProject(t, tree{"f.txt": "one\ntwo\nthree\n"})
	before := treeHash(t, root)
	got, res := mustOK(t, root, "editFile", "project", map[string]any{"path": "f.txt", "oldString": "two", "newString": "2"}, opts{dryRun: true})
	if treeHash(t, root) != before {
		t.Fatal("dry run wrote")
	}
	d := details(t, res)
	wantDiff := "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
	if d["diff"] != wantDiff || !strings.Contains(got, wantDiff) || d["dryRun"] != true {
		t.Errorf("diff %q\ntext %q", d["diff"], got)
	}
	fc := d["files"].([]any)[0].(map[string]any)
	approved := map[string]string{"f.txt": fc["before_sha256"].(string)}

	// The file changes after approval: refused, unchanged.
	os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\ntwo\nthree\nfour\n"), 0o644)
	changed := treeHash(t, root)
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.txt", "oldString": "two", "newString": "2", "expectSha256": approved}, "changed since the diff was approved", "Read it again")
	if treeHash(t, root) != changed {
		t.Fatal("stale write happened")
	}
	// Back to the approved content: the write goes through.
	os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	mustOK(t, root, "editFile", "project", map[string]any{"path": "f.txt", "oldString": "two", "newString": "2", "expectSha256": approved})
	if readFileT(t, filepath.Join(root, "f.txt")) != "one\n2\nthree\n" {
		t.Error("not written")
	}
	// An expectation for another path does not cover this one.
	mustRefuse(t, root, "editFile", "project", map[string]any{"path": "f.txt", "oldString": "2", "newString": "3", "expectSha256": map[string]string{"g.txt": "x"}}, "changed since")
}

func TestEditFileResultShowsRegion(t *testing.T) {
	root := newProject(t, tree{"f.txt": "1\n2\n3\n4\n5\n6\n7\n8\n"})
	got, _ := mustOK(t, root, "editFile", "project", map[string]any{"path": "f.txt", "oldString": "5\n", "newString": "five\nFIVE\n"})
	if !strings.Contains(got, "     3\t3\n     4\t4\n     5\tfive\n     6\tFIVE\n     7\t6\n") {
		t.Errorf("region:\n%s", got)
	}
}
