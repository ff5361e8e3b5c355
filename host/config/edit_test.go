package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opair-dev/opair/host/permission"
)

func TestAddAndRemoveRules(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "opair", "config.json")
	r1 := permission.Rule{Tool: "goTest", Args: "-run TestX", Action: permission.Allow}
	r2 := permission.Rule{Tool: "readExternalFile", Path: "/etc/hostname", Action: permission.Allow}

	// A missing file is created.
	if err := AddRules(path, []permission.Rule{r1}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, "")
	if err != nil || len(cfg.Permissions) != 1 || cfg.Permissions[0].Args != "-run TestX" {
		t.Fatalf("after the first save: %+v %v", cfg, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	// An existing file keeps what it had, as written.
	if err := os.WriteFile(path, []byte("{\n  \"exec\": {\"timeout\": \"5m\"},\n  \"permissions\": [\n    {\"tool\": \"git*\", \"action\": \"allow\"}\n  ]\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AddRules(path, []permission.Rule{r1, r2}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"exec": {"timeout": "5m"}`) {
		t.Errorf("the rest of the file was rewritten:\n%s", data)
	}
	cfg, err = Load(path, "")
	if err != nil || len(cfg.Permissions) != 3 || cfg.Permissions[2].Path != "/etc/hostname" {
		t.Fatalf("after saving two more: %+v %v\n%s", cfg.Permissions, err, data)
	}
	// Remove the middle, then the last, then the first.
	for _, n := range []int{2, 2, 1} {
		if _, err := RemoveRule(path, n); err != nil {
			t.Fatalf("remove %d: %v", n, err)
		}
	}
	cfg, err = Load(path, "")
	if err != nil || len(cfg.Permissions) != 0 || cfg.Exec.Timeout.String() != "5m0s" {
		t.Fatalf("after removing all: %+v %v", cfg, err)
	}
	if _, err := RemoveRule(path, 1); err == nil || !strings.Contains(err.Error(), "there is no rule 1") {
		t.Errorf("removing from an empty list: %v", err)
	}
	// An invalid file is not touched.
	bad := []byte(`{"permissions": [`)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AddRules(path, []permission.Rule{r1}); err == nil {
		t.Error("saved into an invalid config")
	}
	if got, _ := os.ReadFile(path); string(got) != string(bad) {
		t.Errorf("an invalid config was changed: %q", got)
	}
}
