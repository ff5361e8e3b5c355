package toolfile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad500 measures start-up validation of a tools directory holding
// 500 tool files of the three common shapes (exec with deny lists, builtin, exec with a slash command).
// Target: well under a second per load.
func BenchmarkLoad500(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 500; i++ {
		var name, src string
		switch i % 3 {
		case 0:
			name = fmt.Sprintf("goTest%d", i)
			src = tool(name, `{"type": "exec", "bin": "go", "subcommand": "test", "denyArgs": ["-exec", "-toolexec", "-o", "-coverprofile", "-cpuprofile"], "summary": "lineCount:test"}`, `"writes": "artifacts",`)
		case 1:
			name = fmt.Sprintf("readFile%d", i)
			src = tool2(name, `{"type": "object", "properties": {"path": {"type": "string", "description": "Path relative to the project root."}, "start": {"type": "integer", "minimum": 1}, "end": {"type": "integer"}}, "required": ["path"], "additionalProperties": false}`, `{"type": "readFileLines", "scope": "project"}`, "")
		default:
			name = fmt.Sprintf("runTool%d", i)
			src = tool2(name, `{"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}`, `{"type": "exec", "bin": "true"}`, `"slashCommand": "`+fmt.Sprintf("ask-%d", i)+`",`)
		}
		if err := os.WriteFile(filepath.Join(dir, FileName(name)), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		set, err := LoadDir(dir, FirstParty())
		if err != nil {
			b.Fatal(err)
		}
		if len(set.Tools) != 500 {
			b.Fatalf("%d tools", len(set.Tools))
		}
	}
}
