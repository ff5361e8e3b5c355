package defaults_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/opair-dev/opair/host/defaults"
	"github.com/opair-dev/opair/host/toolfile"
)

// toolFile is the part of a tool file these tests look at.
type toolFile struct {
	Schema struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		} `json:"function"`
	} `json:"schema"`
	Handler *struct {
		Type     string   `json:"type"`
		Bin      string   `json:"bin"`
		DenyArgs []string `json:"denyArgs"`
	} `json:"handler"`
	Reads        string `json:"reads"`
	Writes       string `json:"writes"`
	Exec         string `json:"exec"`
	SlashCommand string `json:"slashCommand"`
	RequiresBin  string `json:"requiresBin"`
}

type parameters struct {
	Type                 string                     `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
}

// load parses every default tool file, keyed by file name.
func load(t *testing.T) map[string]toolFile {
	t.Helper()
	files, err := fs.Glob(defaults.FS, "tools/*.json")
	if err != nil {
		t.Fatal(err)
	}
	tools := make(map[string]toolFile, len(files))
	for _, name := range files {
		data, err := fs.ReadFile(defaults.FS, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		var tf toolFile
		if err := dec.Decode(&tf); err != nil {
			t.Errorf("%s: not a JSON tool file: %v", name, err)
			continue
		}
		if dec.More() {
			t.Errorf("%s: data after the JSON object", name)
		}
		tools[path.Base(name)] = tf
	}
	return tools
}

var required = []string{
	// builtin
	"readProjectFile", "readProjectFileLines", "readProjectFileBytes", "listProjectDirectory",
	"findInProject", "createProjectFile", "editProjectFile", "deleteProjectFile",
	"chmodProjectFile", "replaceInProject", "readExternalFile", "listExternalDirectory",
	// exec
	"gitStatus", "gitDiff", "gitLog", "gitShow", "goTest", "goBuild", "goVet", "gofmt",
	"cargoTest", "npmTest",
	// handler-less
	"askQuestion", "plan", "reviewDiff",
}

func TestRequiredToolsPresent(t *testing.T) {
	tools := load(t)
	have := map[string]bool{}
	for _, tf := range tools {
		have[tf.Schema.Function.Name] = true
	}
	for _, name := range required {
		if !have[name] {
			t.Errorf("default tool %s is missing", name)
		}
	}
}

func TestFileNameIsSnakeCaseOfName(t *testing.T) {
	for file, tf := range load(t) {
		name := tf.Schema.Function.Name
		if want := toolfile.FileName(name); file != want {
			t.Errorf("%s holds tool %q; the file should be named %s", file, name, want)
		}
	}
}

func TestSlashCommandsUnique(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	seen := map[string]string{}
	for file, tf := range load(t) {
		sc := tf.SlashCommand
		if sc == "" {
			continue
		}
		if !valid.MatchString(sc) {
			t.Errorf("%s: slashCommand %q does not match %s", file, sc, valid)
		}
		if other, dup := seen[sc]; dup {
			t.Errorf("slashCommand %q is used by both %s and %s", sc, other, file)
		}
		seen[sc] = file
	}
}

func TestDenyArgs(t *testing.T) {
	gitDeny := []string{
		"-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack",
		"--output", "--ext-diff", "--textconv", "-O", "--open-files-in-pager",
	}
	goTestDeny := []string{
		"-exec", "-toolexec", "-o", "-coverprofile", "-cpuprofile", "-memprofile",
		"-blockprofile", "-mutexprofile", "-trace", "-outputdir",
	}
	want := map[string][]string{
		"gitStatus": gitDeny,
		"gitDiff":   gitDeny,
		"gitLog":    gitDeny,
		"gitShow":   gitDeny,
		"goTest":    goTestDeny,
	}
	byName := map[string]toolFile{}
	for _, tf := range load(t) {
		byName[tf.Schema.Function.Name] = tf
	}
	for name, deny := range want {
		tf, ok := byName[name]
		if !ok {
			t.Errorf("%s is missing", name)
			continue
		}
		if tf.Handler == nil {
			t.Errorf("%s has no handler", name)
			continue
		}
		for _, arg := range deny {
			if !slices.Contains(tf.Handler.DenyArgs, arg) {
				t.Errorf("%s: denyArgs lacks %q", name, arg)
			}
		}
	}
}

// TestParameters checks what the model sees: an object schema that allows
// no extra properties, a description on every property, strict only where
// OpenAI strict mode accepts it, and exec tools taking only "args".
func TestParameters(t *testing.T) {
	for file, tf := range load(t) {
		fn := tf.Schema.Function
		if tf.Schema.Type != "function" {
			t.Errorf("%s: schema.type = %q, want function", file, tf.Schema.Type)
		}
		if strings.TrimSpace(fn.Description) == "" {
			t.Errorf("%s: empty description", file)
		}
		var p parameters
		if err := json.Unmarshal(fn.Parameters, &p); err != nil {
			t.Errorf("%s: parameters: %v", file, err)
			continue
		}
		if p.Type != "object" {
			t.Errorf("%s: parameters.type = %q, want object", file, p.Type)
		}
		if p.AdditionalProperties == nil || *p.AdditionalProperties {
			t.Errorf("%s: parameters must set additionalProperties to false", file)
		}
		for prop, raw := range p.Properties {
			var d struct {
				Description string `json:"description"`
			}
			if err := json.Unmarshal(raw, &d); err != nil || strings.TrimSpace(d.Description) == "" {
				t.Errorf("%s: property %q has no description", file, prop)
			}
		}
		for _, r := range p.Required {
			if _, ok := p.Properties[r]; !ok {
				t.Errorf("%s: required lists undeclared property %q", file, r)
			}
		}
		if fn.Strict != nil && *fn.Strict {
			for prop := range p.Properties {
				if !slices.Contains(p.Required, prop) {
					t.Errorf("%s: strict is true but %q is not required (OpenAI strict mode requires every property)", file, prop)
				}
			}
		}
		if tf.Handler != nil && tf.Handler.Type == "exec" {
			for prop := range p.Properties {
				if prop != "args" {
					t.Errorf("%s: exec tool declares parameter %q; only args is allowed", file, prop)
				}
			}
			if len(p.Required) > 0 {
				t.Errorf("%s: args should be optional", file)
			}
		}
	}
}

// TestCategories checks the permission declarations: builtin tools leave
// them to be derived, the others declare them.
func TestCategories(t *testing.T) {
	for file, tf := range load(t) {
		switch {
		case tf.Handler == nil:
			if tf.Reads == "" || tf.Writes == "" {
				t.Errorf("%s: handler-less tools should declare reads and writes", file)
			}
			if tf.Exec != "" {
				t.Errorf("%s: exec is only for exec tools", file)
			}
		case tf.Handler.Type == "exec":
			if tf.Writes == "" {
				t.Errorf("%s: exec tools should declare writes", file)
			}
			if tf.RequiresBin != "" {
				t.Errorf("%s: requiresBin is only for tools without handler.bin", file)
			}
		default:
			if tf.Reads != "" || tf.Writes != "" {
				t.Errorf("%s: builtin tools must not declare reads/writes; they are derived", file)
			}
			if tf.Exec != "" {
				t.Errorf("%s: exec is only for exec tools", file)
			}
		}
	}
}

// TestValidatorAccepts runs the defaults through the tool-file validator, as
// the host does when no tools directory exists.
func TestValidatorAccepts(t *testing.T) {
	set, err := toolfile.LoadFS(defaults.FS, "tools", toolfile.FirstParty(), func(name string) string {
		return "tools/" + name
	})
	if err != nil {
		t.Fatalf("the default tools do not validate:\n%v", err)
	}
	for _, name := range required {
		if set.Lookup(name) == nil {
			t.Errorf("validated set lacks %s", name)
		}
	}
}
