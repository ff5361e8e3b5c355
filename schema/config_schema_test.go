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
		{"unknown top-level field", r(`"exec":`, `"modles": {}, "exec":`).Replace(exampleConfig)},
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

const exampleModels = `{
  "models": {
    "providers": {
      "local": {"type": "openai", "baseURL": "http://localhost:11434/v1", "apiKeyEnv": "OLLAMA_KEY"},
      "anthropic": {"type": "anthropic", "apiKeyEnv": "ANTHROPIC_API_KEY"},
      "openai": {"type": "openai"}
    },
    "roles": {
      "driver": {"provider": "anthropic", "model": "claude-sonnet-4-5", "temperature": 0.2, "maxTokens": 8192, "reasoningEffort": "medium", "contextWindow": 200000},
      "navigator": {"provider": "local", "model": "qwen3-coder"},
      "planner": {"provider": "openai", "model": "gpt-5"},
      "reviewer": {"provider": "openai", "model": "gpt-5-mini"}
    }
  }
}`

func TestConfigSchemaModels(t *testing.T) {
	sch := compileConfig(t)
	if err := validateConfig(sch, []byte(exampleModels)); err != nil {
		t.Errorf("the example models section does not validate:\n%v", err)
	}
	r := strings.NewReplacer
	tests := []struct {
		name string
		doc  string
	}{
		{"unknown models field", r(`"roles":`, `"aliases": {}, "roles":`).Replace(exampleModels)},
		{"unknown role", r(`"planner":`, `"planer":`).Replace(exampleModels)},
		{"unknown role field", r(`"model": "qwen3-coder"`, `"model": "qwen3-coder", "temp": 1`).Replace(exampleModels)},
		{"unknown provider field", r(`"type": "anthropic",`, `"type": "anthropic", "apiKey": "x",`).Replace(exampleModels)},
		{"missing provider type", r(`"openai": {"type": "openai"}`, `"openai": {}`).Replace(exampleModels)},
		{"bad provider type", r(`"openai": {"type": "openai"}`, `"openai": {"type": "gemini"}`).Replace(exampleModels)},
		{"bad provider name", r(`"local": {`, `"my local": {`).Replace(exampleModels)},
		{"role without model", r(`, "model": "gpt-5-mini"`, ``).Replace(exampleModels)},
		{"role without provider", r(`"provider": "openai", "model": "gpt-5-mini"`, `"model": "gpt-5-mini"`).Replace(exampleModels)},
		{"temperature over 2", r(`0.2`, `2.5`).Replace(exampleModels)},
		{"maxTokens zero", r(`8192`, `0`).Replace(exampleModels)},
		{"maxTokens fraction", r(`8192`, `8192.5`).Replace(exampleModels)},
		{"bad reasoningEffort", r(`"medium"`, `"extreme"`).Replace(exampleModels)},
		{"small contextWindow", r(`200000`, `512`).Replace(exampleModels)},
		{"baseURL without scheme", r(`"http://localhost:11434/v1"`, `"localhost:11434/v1"`).Replace(exampleModels)},
		{"baseURL with credentials", r(`"http://localhost:11434/v1"`, `"http://u:p@localhost:11434/v1"`).Replace(exampleModels)},
		{"baseURL endpoint", r(`"http://localhost:11434/v1"`, `"http://localhost:11434/v1/chat/completions"`).Replace(exampleModels)},
		{"apiKeyEnv sk- key", r(`"OLLAMA_KEY"`, `"sk-proj-abcdefghijklmnop"`).Replace(exampleModels)},
		{"apiKeyEnv hex key", r(`"OLLAMA_KEY"`, `"0123456789abcdef0123456789abcdef01234567"`).Replace(exampleModels)},
		{"apiKeyEnv mixed key", r(`"OLLAMA_KEY"`, `"a1B2c3D4e5F6g7H8i9J0k1"`).Replace(exampleModels)},
		{"apiKeyEnv prefixed key", r(`"OLLAMA_KEY"`, `"hf_AbCdEfGhIjKlMnOpQrSt"`).Replace(exampleModels)},
		{"apiKeyEnv with $", r(`"OLLAMA_KEY"`, `"$OLLAMA_KEY"`).Replace(exampleModels)},
		{"model with space", r(`"qwen3-coder"`, `"qwen3 coder"`).Replace(exampleModels)},
	}
	for _, tt := range tests {
		if tt.doc == exampleModels {
			t.Fatalf("%s: the replacement did not apply", tt.name)
		}
		if err := validateConfig(sch, []byte(tt.doc)); err == nil {
			t.Errorf("%s: the schema accepted\n%s", tt.name, tt.doc)
		}
	}
	// Variable names that are not keys pass.
	for _, name := range []string{"HF_TOKEN", "OPENROUTER_API_KEY", "my_key", "AzureOpenAIKey"} {
		if err := validateConfig(sch, []byte(r(`"OLLAMA_KEY"`, `"`+name+`"`).Replace(exampleModels))); err != nil {
			t.Errorf("apiKeyEnv %q rejected: %v", name, err)
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
