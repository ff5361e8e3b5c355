package schema_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/opair-dev/opair/schema"
)

const configID = "https://opair.dev/schema/config.schema.json"

// compileConfig compiles the embedded config schema, checking it against the
// draft 2020-12 meta-schema on the way.
func compileConfig(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Config))
	if err != nil {
		t.Fatalf("config.schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(configID, doc); err != nil {
		t.Fatalf("AddResource: %v", err)
	}
	sch, err := c.Compile(configID)
	if err != nil {
		t.Fatalf("compile config.schema.json: %v", err)
	}
	return sch
}

func validateConfig(sch *jsonschema.Schema, data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func TestConfigSchemaID(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Config))
	if err != nil {
		t.Fatal(err)
	}
	m := doc.(map[string]any)
	if m["$id"] != configID {
		t.Errorf("$id = %v, want %s", m["$id"], configID)
	}
	if m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", m["$schema"])
	}
}

// TestConfigSchemaDocumented checks that every object is closed and every
// field has a description.
func TestConfigSchemaDocumented(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Config))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				if ap, ok := v["additionalProperties"]; !ok || ap != false {
					t.Errorf("%s: an object with properties must have additionalProperties: false", at)
				}
				for name, p := range props {
					pm, _ := p.(map[string]any)
					if _, ok := pm["description"]; !ok {
						if _, isRef := pm["$ref"]; !isRef {
							t.Errorf("%s/properties/%s has no description", at, name)
						}
					}
				}
			}
			for k, e := range v {
				walk(at+"/"+k, e)
			}
		case []any:
			for _, e := range v {
				walk(at+"/[]", e)
			}
		}
	}
	walk("#", doc)
}

const exampleConfig = `{
  "permissions": [
    {"tool": "goTest", "args": "-run *", "action": "allow"},
    {"tool": "*", "path": "secrets/**", "action": "deny"},
    {"tool": "readFile", "path": "~/notes/**", "action": "ask"}
  ],
  "exec": {"timeout": "10m", "outputCap": 65536},
  "plugins": {"pins": {"opair-plugin-foo": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}
}`

func TestConfigSchemaExample(t *testing.T) {
	sch := compileConfig(t)
	if err := validateConfig(sch, []byte(exampleConfig)); err != nil {
		t.Errorf("the example config does not validate:\n%v", err)
	}
}

func TestConfigSchemaRejects(t *testing.T) {
	sch := compileConfig(t)
	r := strings.NewReplacer
	tests := []struct {
		name string
		doc  string
	}{
		{"unknown top-level field", r(`"exec":`, `"models": {}, "exec":`).Replace(exampleConfig)},
		{"unknown rule field", r(`"args": "-run *"`, `"args": "-run *", "when": "always"`).Replace(exampleConfig)},
		{"unknown exec field", r(`"timeout": "10m"`, `"timeout": "10m", "shell": "/bin/sh"`).Replace(exampleConfig)},
		{"unknown plugins field", r(`"pins":`, `"dir": "/tmp", "pins":`).Replace(exampleConfig)},
		{"case variant of a section", r(`"exec":`, `"Exec":`).Replace(exampleConfig)},
		{"case variant of a rule field", r(`"action": "deny"`, `"Action": "deny"`).Replace(exampleConfig)},
		{"$schema key", r(`"exec":`, `"$schema": "x", "exec":`).Replace(exampleConfig)},
		{"bad action", r(`"action": "deny"`, `"action": "block"`).Replace(exampleConfig)},
		{"args and path", r(`"path": "secrets/**"`, `"path": "secrets/**", "args": "-v"`).Replace(exampleConfig)},
		{"bad duration", r(`"10m"`, `"ten minutes"`).Replace(exampleConfig)},
		{"negative duration", r(`"10m"`, `"-10m"`).Replace(exampleConfig)},
		{"output cap too small", r(`65536`, `512`).Replace(exampleConfig)},
		{"bad pin name", r(`"opair-plugin-foo"`, `"foo"`).Replace(exampleConfig)},
		{"bad pin hash", r(`"0123456789abcdef0123`, `"0123456789ABCDEF0123`).Replace(exampleConfig)},
		{"pin not a string", r(`"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"`, `true`).Replace(exampleConfig)},
	}
	for _, tt := range tests {
		if tt.doc == exampleConfig {
			t.Fatalf("%s: the replacement did not apply", tt.name)
		}
		if err := validateConfig(sch, []byte(tt.doc)); err == nil {
			t.Errorf("%s: the schema accepted\n%s", tt.name, tt.doc)
		}
	}
}

// TestConfigSchemaTestdata checks the schema against the config loader's
// corpus: every valid config validates, and every invalid-schema config is
// rejected (the loader rejects them too; see host/config).
func TestConfigSchemaTestdata(t *testing.T) {
	sch := compileConfig(t)
	for _, tc := range []struct {
		dir   string
		valid bool
	}{{"valid", true}, {"invalid-schema", false}} {
		files, err := filepath.Glob(filepath.Join("..", "host", "config", "testdata", tc.dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no files in host/config/testdata/%s", tc.dir)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			err = validateConfig(sch, data)
			if tc.valid && err != nil {
				t.Errorf("%s does not validate:\n%v", f, err)
			}
			if !tc.valid && err == nil {
				t.Errorf("%s validates, but should be rejected", f)
			}
		}
	}
}
