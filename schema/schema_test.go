package schema_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/opair-dev/opair/host/defaults"
	"github.com/opair-dev/opair/internal/binpath"
	"github.com/opair-dev/opair/internal/childenv"
	"github.com/opair-dev/opair/schema"
)

// compileTool compiles the embedded tool schema, checking it against the
// draft 2020-12 meta-schema on the way.
func compileTool(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Tool))
	if err != nil {
		t.Fatalf("tool.schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schema.ToolID, doc); err != nil {
		t.Fatalf("AddResource: %v", err)
	}
	sch, err := c.Compile(schema.ToolID)
	if err != nil {
		t.Fatalf("compile tool.schema.json: %v", err)
	}
	return sch
}

func validate(sch *jsonschema.Schema, data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func TestSchemaID(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Tool))
	if err != nil {
		t.Fatal(err)
	}
	m := doc.(map[string]any)
	if m["$id"] != schema.ToolID {
		t.Errorf("$id = %v, want %s", m["$id"], schema.ToolID)
	}
	if m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", m["$schema"])
	}
}

func TestDefaultToolsValidate(t *testing.T) {
	sch := compileTool(t)
	files, err := fs.Glob(defaults.FS, "tools/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("defaults.FS holds no tools/*.json")
	}
	for _, name := range files {
		data, err := fs.ReadFile(defaults.FS, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := validate(sch, data); err != nil {
			t.Errorf("%s does not validate against tool.schema.json:\n%v", name, err)
		}
	}
}

func TestSeedExampleValidates(t *testing.T) {
	sch := compileTool(t)
	data, err := os.ReadFile("testdata/go_test.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, data); err != nil {
		t.Errorf("testdata/go_test.json (the reference's example) does not validate:\n%v", err)
	}
}

// base is a valid exec tool; the cases below break it in one place each.
const base = `{
  "schema": {
    "type": "function",
    "function": {
      "name": "goTest",
      "description": "Run go test.",
      "parameters": {
        "type": "object",
        "properties": {"args": {"type": "array", "items": {"type": "string"}, "description": "Arguments."}},
        "additionalProperties": false
      }
    }
  },
  "handler": {"type": "exec", "bin": "go", "subcommand": "test", "denyArgs": ["-exec"]},
  "writes": "artifacts"
}`

// builtin is a valid builtin tool.
const builtin = `{
  "schema": {
    "type": "function",
    "function": {
      "name": "readProjectFile",
      "description": "Read a file.",
      "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Path."}},
        "required": ["path"],
        "additionalProperties": false
      },
      "strict": true
    }
  },
  "handler": {"type": "readFile", "scope": "project"}
}`

func TestBaseCasesValidate(t *testing.T) {
	sch := compileTool(t)
	for name, doc := range map[string]string{"base": base, "builtin": builtin} {
		if err := validate(sch, []byte(doc)); err != nil {
			t.Errorf("%s should validate: %v", name, err)
		}
	}
}

func TestRejects(t *testing.T) {
	sch := compileTool(t)
	r := strings.NewReplacer // shorthand
	tests := []struct {
		name string
		doc  string
	}{
		// Unknown fields at each closed level.
		{"unknown top-level field", r(`"writes": "artifacts"`, `"writes": "artifacts", "trusted": true`).Replace(base)},
		{"unknown handler field", r(`"subcommand": "test"`, `"subcommand": "test", "shell": true`).Replace(base)},
		{"unknown schema.function field", r(`"name": "goTest"`, `"name": "goTest", "timeout": 5`).Replace(base)},
		{"unknown schema field", r(`"type": "function",`, `"type": "function", "cache": true,`).Replace(base)},
		{"case variant of a known field", r(`"denyArgs"`, `"DenyArgs"`).Replace(base)},
		{"$schema key", r(`"writes": "artifacts"`, `"writes": "artifacts", "$schema": "x"`).Replace(base)},

		// Values.
		{"schema.type not function", r(`"type": "function",`, `"type": "tool",`).Replace(base)},
		{"name not lowerCamelCase", r(`"goTest"`, `"go_test"`).Replace(base)},
		{"empty description", r(`"Run go test."`, `""`).Replace(base)},
		{"parameters not an object schema", r(`"type": "object"`, `"type": "array"`).Replace(base)},
		{"strict not boolean", r(`"strict": true`, `"strict": "yes"`).Replace(builtin)},
		{"unknown reads category", r(`"writes": "artifacts"`, `"reads": "everything"`).Replace(base)},
		{"unknown writes category", r(`"writes": "artifacts"`, `"writes": "cache"`).Replace(base)},
		{"exec not untrusted", r(`"writes": "artifacts"`, `"exec": "trusted"`).Replace(base)},
		{"bad slash command", r(`"writes": "artifacts"`, `"slashCommand": "/Test"`).Replace(base)},
		{"unknown summary", r(`"subcommand": "test"`, `"subcommand": "test", "summary": "fancy"`).Replace(base)},
		{"lineCount without noun", r(`"subcommand": "test"`, `"subcommand": "test", "summary": "lineCount:"`).Replace(base)},
		{"empty deny entry", r(`["-exec"]`, `["-exec", ""]`).Replace(base)},
		{"lone dash deny entry", r(`["-exec"]`, `["-"]`).Replace(base)},
		{"newline in subcommand", r(`"subcommand": "test"`, `"subcommand": "test\nrm"`).Replace(base)},
		{"env sets PATH", r(`"subcommand": "test"`, `"subcommand": "test", "env": {"PATH": "/tmp"}`).Replace(base)},
		{"env sets GIT_DIR", r(`"subcommand": "test"`, `"subcommand": "test", "env": {"GIT_DIR": "/tmp"}`).Replace(base)},
		{"env passes a token", r(`"subcommand": "test"`, `"subcommand": "test", "env": {"GITHUB_TOKEN": "x"}`).Replace(base)},
		{"handler without type", r(`"type": "exec", `, ``).Replace(base)},

		// Conditional rules.
		{"exec without bin", r(`"bin": "go", `, ``).Replace(base)},
		{"exec with scope", r(`"subcommand": "test"`, `"subcommand": "test", "scope": "project"`).Replace(base)},
		{"exec with config", r(`"subcommand": "test"`, `"subcommand": "test", "config": {}`).Replace(base)},
		{"exec parameter other than args", r(`{"args"`, `{"pkg": {"type": "string"}, "args"`).Replace(base)},
		{"exec args not an array of strings", r(`"items": {"type": "string"}`, `"items": {"type": "integer"}`).Replace(base)},
		{"builtin with bin", r(`"scope": "project"`, `"scope": "project", "bin": "cat"`).Replace(builtin)},
		{"builtin with denyArgs", r(`"scope": "project"`, `"scope": "project", "denyArgs": ["-x"]`).Replace(builtin)},
		{"builtin with summary", r(`"scope": "project"`, `"scope": "project", "summary": "grep"`).Replace(builtin)},
		{"builtin without scope", r(`, "scope": "project"`, ``).Replace(builtin)},
		{"builtin with includeHidden", r(`"scope": "project"`, `"scope": "project", "includeHidden": true`).Replace(builtin)},
		{"listDirectory with project-dot", r(`"readFile", "scope": "project"`, `"listDirectory", "scope": "project-dot"`).Replace(builtin)},
		{"replaceInProject with external", r(`"readFile", "scope": "project"`, `"replaceInProject", "scope": "external"`).Replace(builtin)},
		{"editFile with external", r(`"readFile", "scope": "project"`, `"editFile", "scope": "external"`).Replace(builtin)},
		{"findInProject with scope", r(`"readFile"`, `"findInProject"`).Replace(builtin)},
		{"builtin parameter with wrong name", r(`"path":`, `"file":`).Replace(builtin)},
		{"builtin parameter with wrong type", r(`{"type": "string", "description": "Path."}`, `{"type": "integer", "description": "Path."}`).Replace(builtin)},
		{"untrusted on a builtin", r(`"scope": "project"}`, `"scope": "project"}, "exec": "untrusted"`).Replace(builtin)},
		{"untrusted without handler", r(`,
  "handler": {"type": "readFile", "scope": "project"}`, `, "exec": "untrusted"`).Replace(builtin)},
		{"bin with white space", r(`"bin": "go"`, `"bin": "go test"`).Replace(base)},
		{"bin as a relative path", r(`"bin": "go"`, `"bin": "./bin/go"`).Replace(base)},
		{"env sets HOME", r(`"subcommand": "test"`, `"subcommand": "test", "env": {"HOME": "/tmp"}`).Replace(base)},
		{"env sets lower-case npm config", r(`"subcommand": "test"`, `"subcommand": "test", "env": {"npm_config_script_shell": "/tmp/x"}`).Replace(base)},
		{"required builtin parameter not required", r(`"required": ["path"]`, `"required": []`).Replace(builtin)},
		{"required builtin parameter missing", r(`"properties": {"path": {"type": "string", "description": "Path."}},
        "required": ["path"],`, `"properties": {},`).Replace(builtin)},
		{"plugin type with bin", r(`{"type": "readFile", "scope": "project"}`, `{"type": "sqlQuery", "bin": "psql"}`).Replace(builtin)},
		{"plugin type with scope", r(`{"type": "readFile", "scope": "project"}`, `{"type": "sqlQuery", "scope": "project"}`).Replace(builtin)},
		{"requiresBin beside handler.bin", r(`"writes": "artifacts"`, `"requiresBin": "go"`).Replace(base)},
		{"missing schema", `{"handler": {"type": "exec", "bin": "go"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.doc == base || tt.doc == builtin {
				t.Fatal("test case did not change the document; fix the replacement")
			}
			if err := validate(sch, []byte(tt.doc)); err == nil {
				t.Errorf("accepted, want rejected:\n%s", tt.doc)
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	sch := compileTool(t)
	r := strings.NewReplacer
	tests := []struct {
		name string
		doc  string
	}{
		{"lineCount summary", r(`"subcommand": "test"`, `"subcommand": "test", "summary": "lineCount:file"`).Replace(base)},
		{"empty summary", r(`"subcommand": "test"`, `"subcommand": "test", "summary": ""`).Replace(base)},
		{"exec untrusted", r(`"writes": "artifacts"`, `"writes": "artifacts", "exec": "untrusted"`).Replace(base)},
		{"env with a plain variable", r(`"subcommand": "test"`, `"subcommand": "test", "env": {"CGO_ENABLED": "0"}`).Replace(base)},
		{"findInProject without scope", r(
			`"readFile", "scope": "project"`, `"findInProject", "includeHidden": true`,
			`"path": {"type": "string"`, `"pattern": {"type": "string"`,
			`"required": ["path"]`, `"required": ["pattern"]`,
		).Replace(builtin)},
		{"third-party type with config", r(`{"type": "readFile", "scope": "project"}`, `{"type": "sqlQuery", "config": {"dsn": "x"}}`).Replace(builtin)},
		{"handler-less with requiresBin", r(`"handler": {"type": "readFile", "scope": "project"}`, `"requiresBin": "git", "slashCommand": "review-diff", "reads": "project-dot", "writes": "none"`).Replace(builtin)},
		{"integer parameter typed number", r(
			`"readFile", "scope": "project"`, `"readFileLines", "scope": "project"`,
			`"properties": {"path"`, `"properties": {"start": {"type": "number"}, "path"`,
		).Replace(builtin)},
		{"absolute bin", r(`"bin": "go"`, `"bin": "/usr/local/go/bin/go"`).Replace(base)},
		{"internal", r(`"writes": "artifacts"`, `"writes": "artifacts", "internal": true`).Replace(base)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := validate(sch, []byte(tt.doc)); err != nil {
				t.Errorf("rejected, want accepted: %v\n%s", err, tt.doc)
			}
		})
	}
}

// TestParametersAreSchemas compiles each default tool's parameters as a
// draft 2020-12 schema, as the host does.
func TestParametersAreSchemas(t *testing.T) {
	files, _ := fs.Glob(defaults.FS, "tools/*.json")
	for _, name := range files {
		data, _ := fs.ReadFile(defaults.FS, name)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		params := doc.(map[string]any)["schema"].(map[string]any)["function"].(map[string]any)["parameters"]
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := "mem:///" + path.Base(name)
		if err := c.AddResource(url, params); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, err := c.Compile(url); err != nil {
			t.Errorf("%s: parameters do not compile as JSON Schema: %v", name, err)
		}
	}
}

// TestEnvNamesMatchValidator keeps the schema's handler.env name rules in
// step with internal/childenv, which the validator uses: for each sample
// name, the schema must accept it exactly when childenv does.
func TestEnvNamesMatchValidator(t *testing.T) {
	sch := compileTool(t)
	names := []string{
		// allowed
		"CGO_ENABLED", "GOOS", "GOARCH", "RUST_BACKTRACE", "NODE_ENV", "CI", "LANG", "TZ",
		"GOPROXY", "GOPRIVATE", "CARGO_INCREMENTAL", "_X", "x",
		// code running or configuration
		"PATH", "path", "NODE_OPTIONS", "BASH_ENV", "ENV", "GOFLAGS", "goflags", "GOENV", "GOTOOLCHAIN",
		"TAR_OPTIONS", "RIPGREP_CONFIG_PATH", "PYTHONPATH", "PERL5OPT", "RUBYOPT", "IFS",
		"PROMPT_COMMAND", "RUSTC_WRAPPER", "CC", "CXX", "EDITOR", "PAGER", "SSH_ASKPASS", "HOME",
		"LD_PRELOAD", "ld_preload", "DYLD_INSERT_LIBRARIES", "GIT_DIR", "GIT_CONFIG_COUNT",
		"npm_config_script_shell", "NPM_CONFIG_USERCONFIG", "YARN_RC_FILENAME",
		"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "CARGO_HOME", "OPAIR_TOOLS_DIR",
		// secrets
		"OPENAI_API_KEY", "MY_APIKEY", "NPM_TOKEN", "github_token", "APP_SECRET", "DB_PASSWORD",
		"MYSQL_PASSWD", "SECRETS", "AWS_REGION", "AZURE_TENANT", "GH_HOST", "HF_HOME",
		"SSH_AUTH_SOCK", "GPG_TTY", "X_AUTH", "SERVICE_CREDENTIALS", "SIGNING_PRIVATE_KEY", "TOKENIZERS",
		// not names at all
		"1X", "A-B", "A B",
	}
	for _, name := range names {
		doc := strings.Replace(base, `"subcommand": "test"`, `"subcommand": "test", "env": {`+jsonString(name)+`: "1"}`, 1)
		schemaOK := validate(sch, []byte(doc)) == nil
		why := childenv.Forbidden(name)
		if schemaOK != (why == "") {
			t.Errorf("env name %q: schema accepts=%v, validator says %q", name, schemaOK, why)
		}
	}
}

// TestBinNamesMatchValidator does the same for handler.bin and requiresBin
// against internal/binpath.
func TestBinNamesMatchValidator(t *testing.T) {
	sch := compileTool(t)
	for _, bin := range []string{"go", "git", "cargo-nextest", "/usr/bin/git", "/opt/My Tools/x",
		"", " go", "go ", "go test", "go\ttest", "./go", "bin/go", "go\nrm"} {
		var b strings.Builder
		b.WriteString(`"bin": "`)
		b.WriteString(bin)
		b.WriteString(`"`)
		doc := strings.Replace(base, `"bin": "go"`, b.String(), 1)
		schemaOK := validate(sch, []byte(doc)) == nil
		name, _ := strconv.Unquote(`"` + bin + `"`)
		why := binpath.CheckName(name)
		if schemaOK != (why == "") {
			t.Errorf("bin %q: schema accepts=%v, validator says %q", name, schemaOK, why)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
