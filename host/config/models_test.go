package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// envOf returns a getenv over a map.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

const modelsConfig = `{
  "models": {
    "providers": {
      "local": {"type": "openai", "baseURL": "http://localhost:11434/v1/", "apiKeyEnv": "OLLAMA_KEY"},
      "ollama": {"type": "openai", "baseURL": "http://localhost:11434/v1"},
      "anthropic": {"type": "anthropic", "apiKeyEnv": "ANTHROPIC_API_KEY"},
      "openai": {"type": "openai"}
    },
    "roles": {
      "driver": {"provider": "anthropic", "model": "claude-sonnet-4-5", "temperature": 0.2, "maxTokens": 8192, "reasoningEffort": "medium", "contextWindow": 200000},
      "navigator": {"provider": "local", "model": "qwen3-coder:30b"},
      "planner": {"provider": "openai", "model": "gpt-5", "temperature": 0, "reasoningEffort": "high"},
      "reviewer": {"provider": "ollama", "model": "hf.co/org/model-GGUF:Q4_K_M"}
    }
  }
}`

func TestLoadModels(t *testing.T) {
	home := env(t)
	user := write(t, filepath.Join(home, ".config", "opair", "config.json"), modelsConfig)
	cfg, err := Load(user, "")
	if err != nil {
		t.Fatal(err)
	}
	src := "~/.config/opair/config.json"
	want := map[string]Role{
		"driver": {Name: "driver", Provider: "anthropic", ProviderType: "anthropic", BaseURL: "https://api.anthropic.com", APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-sonnet-4-5",
			Temperature: ptr(0.2), MaxTokens: 8192, ReasoningEffort: "medium", ContextWindow: 200000, Source: src + ":10"},
		"navigator": {Name: "navigator", Provider: "local", ProviderType: "openai", BaseURL: "http://localhost:11434/v1", APIKeyEnv: "OLLAMA_KEY", Model: "qwen3-coder:30b", Source: src + ":11"},
		"planner": {Name: "planner", Provider: "openai", ProviderType: "openai", BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY", Model: "gpt-5",
			Temperature: ptr(0.0), ReasoningEffort: "high", Source: src + ":12"},
		"reviewer": {Name: "reviewer", Provider: "ollama", ProviderType: "openai", BaseURL: "http://localhost:11434/v1", Model: "hf.co/org/model-GGUF:Q4_K_M", Source: src + ":13"},
	}
	if !reflect.DeepEqual(cfg.Models, want) {
		t.Errorf("Models =\n%+v\nwant\n%+v", cfg.Models, want)
	}

	// Without a models section there are no roles.
	cfg, err = Load(write(t, filepath.Join(home, "c.json"), `{}`), "")
	if err != nil || cfg.Models != nil {
		t.Errorf("no section: %v, %v", cfg.Models, err)
	}
	// A section with providers only.
	cfg, err = Load(write(t, filepath.Join(home, "c.json"), `{"models": {"providers": {"x": {"type": "openai"}}}}`), "")
	if err != nil || cfg.Models == nil || len(cfg.Models) != 0 {
		t.Errorf("providers only: %v, %v", cfg.Models, err)
	}
}

func TestModelsErrors(t *testing.T) {
	const key = "sk-proj-AbCdEf0123456789AbCdEf0123456789"
	const randomKey = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
	role := func(r string) string {
		return "{\"models\": {\"providers\": {\"p\": {\"type\": \"openai\"}},\n\"roles\": {\"driver\": " + r + "}}}"
	}
	provider := func(p string) string {
		return "{\"models\": {\"providers\": {\n\"p\": " + p + "}}}"
	}
	tests := []struct {
		name    string
		file    string
		line    int
		want    []string
		notWant string
	}{
		{"unknown models field", "{\"models\": {\n\"provider\": {}}}", 2, []string{`unknown field "provider" in models`, `did you mean "providers"?`}, ""},
		{"models not an object", `{"models": []}`, 1, []string{`models must be an object, not a array`}, ""},
		{"providers not an object", `{"models": {"providers": []}}`, 1, []string{`models.providers must be a object, not a array`}, ""},
		{"roles not an object", `{"models": {"roles": "driver"}}`, 1, []string{`models.roles must be a object, not a string`}, ""},
		{"unknown role", "{\"models\": {\"roles\": {\n\"navigater\": {}}}}", 2, []string{`unknown field "navigater" in models.roles`, `did you mean "navigator"?`, "valid roles are: driver, navigator, planner, reviewer"}, ""},
		{"case variant role", "{\"models\": {\"roles\": {\n\"Driver\": {}}}}", 2, []string{`key "Driver" in models.roles differs from the field "driver" only by case`}, ""},
		{"role not an object", role(`"gpt-5"`), 2, []string{`models.roles.driver must be an object, not a string`}, ""},
		{"unknown role field", role(`{"provider": "p", "model": "m", "temprature": 1}`), 2, []string{`unknown field "temprature" in models.roles.driver`, `did you mean "temperature"?`}, ""},
		{"missing provider", role(`{"model": "m"}`), 2, []string{`models.roles.driver is missing "provider"`}, ""},
		{"unknown provider", role(`{"provider": "q", "model": "m"}`), 2, []string{`models.roles.driver.provider "q" is not defined in models.providers`, `did you mean "p"?`}, ""},
		{"unknown provider, no providers", "{\"models\": {\"roles\": {\n\"driver\": {\"provider\": \"openrouter\", \"model\": \"m\"}}}}", 2,
			[]string{`"openrouter" is not defined in models.providers`, `define it in models.providers, e.g. "openrouter": {"type": "openai"`}, ""},
		{"provider with errors", "{\"models\": {\"providers\": {\"p\": {\"type\": \"gemini\"}},\n\"roles\": {\"driver\": {\"provider\": \"p\", \"model\": \"m\"}}}}", 2, []string{`models.roles.driver.provider "p" has errors`}, ""},
		{"missing model", role(`{"provider": "p"}`), 2, []string{`models.roles.driver is missing "model"`}, ""},
		{"empty model", role(`{"provider": "p", "model": ""}`), 2, []string{`models.roles.driver.model is empty`}, ""},
		{"model with space", role(`{"provider": "p", "model": "gpt 5"}`), 2, []string{`contains white space`}, ""},
		{"temperature too high", role(`{"provider": "p", "model": "m", "temperature": 2.5}`), 2, []string{`models.roles.driver.temperature 2.5 is out of range`, "between 0 and 2"}, ""},
		{"temperature negative", role(`{"provider": "p", "model": "m", "temperature": -0.1}`), 2, []string{`temperature -0.1 is out of range`}, ""},
		{"temperature string", role(`{"provider": "p", "model": "m", "temperature": "0.2"}`), 2, []string{`models.roles.driver.temperature must be a number, not a string`}, ""},
		{"maxTokens zero", role(`{"provider": "p", "model": "m", "maxTokens": 0}`), 2, []string{`models.roles.driver.maxTokens 0 is out of range`}, ""},
		{"maxTokens fraction", role(`{"provider": "p", "model": "m", "maxTokens": 1.5}`), 2, []string{`maxTokens 1.5 is not an integer`}, ""},
		{"contextWindow small", role(`{"provider": "p", "model": "m", "contextWindow": 512}`), 2, []string{`models.roles.driver.contextWindow 512 is out of range`, "at least 1024"}, ""},
		{"reasoningEffort bad", role(`{"provider": "p", "model": "m", "reasoningEffort": "extreme"}`), 2, []string{`reasoningEffort "extreme" is not one of low, medium, high`}, ""},
		{"reasoningEffort case", role(`{"provider": "p", "model": "m", "reasoningEffort": "High"}`), 2, []string{`write it in lower case: "high"`}, ""},
		{"provider not an object", provider(`"openai"`), 2, []string{`models.providers.p must be an object, not a string`}, ""},
		{"bad provider name", "{\"models\": {\"providers\": {\n\"my provider\": {\"type\": \"openai\"}}}}", 2, []string{`"my provider" is not a provider name`}, ""},
		{"missing type", provider(`{"baseURL": "http://x/v1"}`), 2, []string{`models.providers.p is missing "type"`}, ""},
		{"type case", provider(`{"type": "OpenAI"}`), 2, []string{`write it in lower case: "openai"`}, ""},
		{"type unknown", provider(`{"type": "ollama"}`), 2, []string{`models.providers.p.type "ollama" is not one of openai, anthropic`, "OpenAI-compatible"}, ""},
		{"case variant provider field", provider(`{"type": "openai", "baseUrl": "http://x/v1"}`), 2, []string{`key "baseUrl" in models.providers.p differs from the field "baseURL" only by case`}, ""},
		{"unknown provider field", provider(`{"type": "openai", "kind": "x"}`), 2, []string{`unknown field "kind" in models.providers.p`, "valid fields are: type, baseURL, apiKeyEnv"}, ""},
		{"key in the config", provider(`{"type": "openai", "api_key": "` + key + `"}`), 2, []string{`unknown field "api_key" in models.providers.p`, `a key never goes in the config`, `"apiKeyEnv": "OPENAI_API_KEY"`}, key},
		{"baseURL without scheme", provider(`{"type": "openai", "baseURL": "localhost:11434/v1"}`), 2, []string{`baseURL "localhost:11434/v1" is not an http(s) URL`}, ""},
		{"baseURL with credentials", provider(`{"type": "openai", "baseURL": "https://user:pw@example.com/v1"}`), 2, []string{`baseURL contains credentials`}, "pw"},
		{"baseURL with query", provider(`{"type": "openai", "baseURL": "https://example.com/v1?key=x"}`), 2, []string{`has a query or a fragment`}, ""},
		{"baseURL endpoint", provider(`{"type": "openai", "baseURL": "http://localhost:8080/v1/chat/completions"}`), 2, []string{`names an endpoint, not the API's root`, `"http://localhost:8080/v1"`}, ""},
		{"anthropic baseURL v1", provider(`{"type": "anthropic", "baseURL": "https://proxy.example.com/v1"}`), 2, []string{`ends in /v1`, `"https://proxy.example.com"`}, ""},
		{"apiKeyEnv is a key", provider(`{"type": "openai", "apiKeyEnv": "` + key + `"}`), 2, []string{`models.providers.p.apiKeyEnv looks like an API key, not the name of a variable`, "revoking"}, key},
		{"apiKeyEnv is random", provider(`{"type": "openai", "apiKeyEnv": "` + randomKey + `"}`), 2, []string{`looks like an API key`}, randomKey},
		{"apiKeyEnv with $", provider(`{"type": "openai", "apiKeyEnv": "$OPENAI_API_KEY"}`), 2, []string{`apiKeyEnv "$OPENAI_API_KEY" starts with $`, `write the name alone: "OPENAI_API_KEY"`}, ""},
		{"apiKeyEnv not a name", provider(`{"type": "openai", "apiKeyEnv": "MY KEY"}`), 2, []string{`apiKeyEnv "MY KEY" is not a variable name`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := env(t)
			path := write(t, filepath.Join(home, "config.json"), tt.file)
			_, err := Load(path, "")
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v", err)
			}
			msg := err.Error()
			if at := fmt.Sprintf("%s:%d:", path, tt.line); !strings.Contains(msg, at) {
				t.Errorf("error does not point at %s:\n%s", at, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not contain %q:\n%s", w, msg)
				}
			}
			if tt.notWant != "" && strings.Contains(msg, tt.notWant) {
				t.Errorf("error repeats the secret %q:\n%s", tt.notWant, msg)
			}
			for _, d := range errs {
				if d.Hint == "" {
					t.Errorf("no hint for %s", d)
				}
			}
		})
	}
}

func TestModelsNotInProject(t *testing.T) {
	env(t)
	root := t.TempDir()
	project := write(t, filepath.Join(root, ".opair", "config.json"), "{\"permissions\": [],\n\"models\": {\"providers\": {\"evil\": {\"type\": \"openai\", \"baseURL\": \"https://attacker.example/v1\"}}}}")
	_, err := Load("", root)
	if err == nil || !strings.Contains(err.Error(), project+`:2:1: section "models" is not allowed in a project config`) || !strings.Contains(err.Error(), `put "models" in your user config`) {
		t.Errorf("models in a project config: %v", err)
	}
}

func TestLooksLikeKey(t *testing.T) {
	for _, s := range []string{
		"sk-abc", "sk-proj-abcdefghijklmnop", "sk_live_abcdefghijklmnopqrstu", "xai-abcdefghijklmnopqrst", "gsk_abcdefghijklmnopqrstuv",
		"AIzaSyA1234567890abcdefghijklmnopq", "hf_AbCdEfGhIjKlMnOpQrStUv", "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
		"0123456789abcdef0123456789abcdef01234567", "a1B2c3D4e5F6g7H8i9J0k1", "Bearer sk-abcdefghijklmnopqrstu",
		"abc.def-ghi/jkl+mno=pqrstuvw",
	} {
		if !looksLikeKey(s) {
			t.Errorf("looksLikeKey(%q) = false", s)
		}
	}
	for _, s := range []string{
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_KEY", "HF_TOKEN", "hf_token", "OPENROUTER_API_KEY", "my_key", "Key2",
		"GITHUB_PAT_FOR_MODELS", "A_VERY_LONG_VARIABLE_NAME_FOR_THE_PROVIDER_KEY", "AzureOpenAIKey",
	} {
		if looksLikeKey(s) {
			t.Errorf("looksLikeKey(%q) = true", s)
		}
	}
}

func TestRole(t *testing.T) {
	home := env(t)
	cfg, err := Load(write(t, filepath.Join(home, ".config", "opair", "config.json"), modelsConfig), "")
	if err != nil {
		t.Fatal(err)
	}
	keys := envOf("ANTHROPIC_API_KEY", "a", "OLLAMA_KEY", "o", "OPENAI_API_KEY", "k")

	r, err := cfg.Role("navigator", keys)
	if err != nil || r.Model != "qwen3-coder:30b" || r.APIKeyEnv != "OLLAMA_KEY" {
		t.Errorf("navigator: %+v, %v", r, err)
	}
	// The key's variable must be set.
	_, err = cfg.Role("driver", envOf())
	if err == nil || !strings.Contains(err.Error(), "$ANTHROPIC_API_KEY, which is not set") || !strings.Contains(err.Error(), "    export ANTHROPIC_API_KEY=<your key>") ||
		!strings.Contains(err.Error(), "~/.config/opair/config.json:10") {
		t.Errorf("unset key: %v", err)
	}
	// A local server without a key needs no variable.
	if r, err := cfg.Role("reviewer", envOf()); err != nil || r.APIKeyEnv != "" {
		t.Errorf("reviewer: %+v, %v", r, err)
	}

	// A role without an entry uses the driver's.
	cfg2, err := Load(write(t, filepath.Join(home, "c2.json"), `{"models": {"providers": {"a": {"type": "anthropic"}}, "roles": {
  "driver": {"provider": "a", "model": "claude-opus-4-1", "maxTokens": 4096}}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	r, err = cfg2.Role("planner", keys)
	want := Role{Name: "planner", Provider: "a", ProviderType: "anthropic", BaseURL: DefaultAnthropicBaseURL, APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-opus-4-1", MaxTokens: 4096,
		Source: "~/c2.json:2 (the driver's, for planner)"}
	if err != nil || !reflect.DeepEqual(r, want) {
		t.Errorf("planner from driver:\n%+v, %v\nwant %+v", r, err, want)
	}

	// A section without a driver: the environment configures the rest.
	t.Setenv(EnvVar, filepath.Join(home, "c3.json"))
	cfg3, err := Load(write(t, filepath.Join(home, "c3.json"), `{"models": {"providers": {"l": {"type": "openai", "baseURL": "http://localhost:8080/v1"}}, "roles": {
  "navigator": {"provider": "l", "model": "small"}}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := cfg3.Role("driver", envOf("OPENAI_API_KEY", "k", "OPAIR_MODEL", "gpt-5")); err != nil || r.Model != "gpt-5" || r.Source != "environment (OPENAI_API_KEY, OPAIR_MODEL)" {
		t.Errorf("driver from the environment: %+v, %v", r, err)
	}
	_, err = cfg3.Role("driver", envOf())
	if err == nil || !strings.Contains(err.Error(), `the models section of ~/c3.json has no "driver" role`) || !strings.Contains(err.Error(), `    "driver": {"provider": "l", "model": "gpt-5"}`) {
		t.Errorf("no driver anywhere: %v", err)
	}
}

func TestRoleFromEnvironment(t *testing.T) {
	env(t)
	tests := []struct {
		name string
		env  []string
		want Role
		err  []string
	}{
		{"openai", []string{"OPENAI_API_KEY", "k", "OPAIR_MODEL", "gpt-5"},
			Role{Name: "driver", ProviderType: "openai", BaseURL: DefaultOpenAIBaseURL, APIKeyEnv: "OPENAI_API_KEY", Model: "gpt-5", Source: "environment (OPENAI_API_KEY, OPAIR_MODEL)"}, nil},
		{"openai-compatible with a key", []string{"OPENAI_BASE_URL", "http://127.0.0.1:9/v1/", "OPENAI_API_KEY", "x", "OPAIR_MODEL", "m"},
			Role{Name: "driver", ProviderType: "openai", BaseURL: "http://127.0.0.1:9/v1", APIKeyEnv: "OPENAI_API_KEY", Model: "m", Source: "environment (OPENAI_BASE_URL, OPENAI_API_KEY, OPAIR_MODEL)"}, nil},
		{"local without a key", []string{"OPENAI_BASE_URL", "http://localhost:11434/v1", "OPAIR_MODEL", "qwen3-coder"},
			Role{Name: "driver", ProviderType: "openai", BaseURL: "http://localhost:11434/v1", Model: "qwen3-coder", Source: "environment (OPENAI_BASE_URL, OPAIR_MODEL)"}, nil},
		{"anthropic", []string{"ANTHROPIC_API_KEY", "a", "OPAIR_MODEL", "claude-sonnet-4-5"},
			Role{Name: "driver", ProviderType: "anthropic", BaseURL: DefaultAnthropicBaseURL, APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-sonnet-4-5", Source: "environment (ANTHROPIC_API_KEY, OPAIR_MODEL)"}, nil},
		{"anthropic base URL", []string{"ANTHROPIC_API_KEY", "a", "ANTHROPIC_BASE_URL", "http://proxy:1", "OPAIR_MODEL", "claude-x"},
			Role{Name: "driver", ProviderType: "anthropic", BaseURL: "http://proxy:1", APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-x", Source: "environment (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, OPAIR_MODEL)"}, nil},
		{"both keys, a claude model", []string{"OPENAI_API_KEY", "k", "ANTHROPIC_API_KEY", "a", "OPAIR_MODEL", "claude-sonnet-4-5"},
			Role{Name: "driver", ProviderType: "anthropic", BaseURL: DefaultAnthropicBaseURL, APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-sonnet-4-5", Source: "environment (ANTHROPIC_API_KEY, OPAIR_MODEL)"}, nil},
		{"both keys, another model", []string{"OPENAI_API_KEY", "k", "ANTHROPIC_API_KEY", "a", "OPAIR_MODEL", "gpt-5"},
			Role{Name: "driver", ProviderType: "openai", BaseURL: DefaultOpenAIBaseURL, APIKeyEnv: "OPENAI_API_KEY", Model: "gpt-5", Source: "environment (OPENAI_API_KEY, OPAIR_MODEL)"}, nil},
		{"OPAIR_PROVIDER decides", []string{"OPENAI_API_KEY", "k", "ANTHROPIC_API_KEY", "a", "OPAIR_MODEL", "m", "OPAIR_PROVIDER", "anthropic"},
			Role{Name: "driver", ProviderType: "anthropic", BaseURL: DefaultAnthropicBaseURL, APIKeyEnv: "ANTHROPIC_API_KEY", Model: "m", Source: "environment (OPAIR_PROVIDER, ANTHROPIC_API_KEY, OPAIR_MODEL)"}, nil},
		{"bad OPAIR_PROVIDER", []string{"OPAIR_PROVIDER", "gemini", "OPAIR_MODEL", "m"}, Role{}, []string{`OPAIR_PROVIDER="gemini" is not a provider`}},
		{"OPAIR_PROVIDER without its key", []string{"OPAIR_PROVIDER", "anthropic", "OPENAI_API_KEY", "k", "OPAIR_MODEL", "m"}, Role{}, []string{"ANTHROPIC_API_KEY is not set", "    export ANTHROPIC_API_KEY=<your key>"}},
		{"key without a model", []string{"OPENAI_API_KEY", "k"}, Role{}, []string{"OPAIR_MODEL is not set", "    export OPAIR_MODEL=gpt-5"}},
		{"anthropic key without a model", []string{"ANTHROPIC_API_KEY", "k"}, Role{}, []string{"    export OPAIR_MODEL=claude-sonnet-4-5"}},
		{"model without a provider", []string{"OPAIR_MODEL", "gpt-5"}, Role{}, []string{"OPAIR_MODEL=gpt-5 is set, but no provider is", "    export OPENAI_API_KEY=<your key>", "    export OPENAI_BASE_URL=http://localhost:11434/v1"}},
		{"bad base URL", []string{"OPENAI_BASE_URL", "localhost:11434", "OPAIR_MODEL", "m"}, Role{}, []string{`OPENAI_BASE_URL="localhost:11434" is not an http(s) URL`}},
		{"nothing", nil, Role{}, []string{
			"no model is configured for the driver role",
			"    export OPENAI_API_KEY=<your key>\n    export OPAIR_MODEL=gpt-5\n",
			"    export ANTHROPIC_API_KEY=<your key>\n    export OPAIR_MODEL=claude-sonnet-4-5\n",
			"    export OPENAI_BASE_URL=http://localhost:11434/v1\n",
			`or add to ~/.config/opair/config.json`,
			`"models": {`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, cfg := range []*Config{nil, {}} {
				r, err := cfg.Role("driver", envOf(tt.env...))
				if tt.err == nil {
					if err != nil || !reflect.DeepEqual(r, tt.want) {
						t.Errorf("Role = %+v, %v\nwant %+v", r, err, tt.want)
					}
					continue
				}
				if err == nil {
					t.Fatalf("no error; got %+v", r)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error does not contain %q:\n%s", w, err)
					}
				}
			}
		})
	}
}

// TestMissingModelSnippetWorks pastes the config lines of the missing-model
// error into a config file and checks that they configure the role.
func TestMissingModelSnippetWorks(t *testing.T) {
	home := env(t)
	_, err := (*Config)(nil).Role("navigator", envOf())
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	start := strings.Index(msg, `    "models": {`)
	end := strings.Index(msg[start:], "\n    }\n")
	if start < 0 || end < 0 {
		t.Fatalf("no snippet in:\n%s", msg)
	}
	snippet := msg[start : start+end+len("\n    }")]
	cfg, err := Load(write(t, filepath.Join(home, "pasted.json"), "{\n"+snippet+"\n}\n"), "")
	if err != nil {
		t.Fatalf("the snippet does not load:\n%s\n%v", snippet, err)
	}
	r, err := cfg.Role("navigator", envOf("OPENAI_API_KEY", "k"))
	if err != nil || r.ProviderType != "openai" || r.Model != "gpt-5" || r.APIKeyEnv != "OPENAI_API_KEY" {
		t.Errorf("pasted config: %+v, %v", r, err)
	}
}

func TestLoopsSection(t *testing.T) {
	dir := t.TempDir()
	write := func(src string) string {
		p := filepath.Join(dir, "config.json")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg, err := Load(write(`{"loops": {"plan": {"role": "reviewer", "systemPrompt": "Plan briefly.", "toolWhitelist": ["readProjectFile", "git*"]}, "navigator": {"toolWhitelist": []}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Loops["plan"]
	if p.Role != "reviewer" || p.System != "Plan briefly." || len(p.ToolWhitelist) != 2 || cfg.Loops["navigator"].ToolWhitelist == nil {
		t.Errorf("loops: %+v", cfg.Loops)
	}
	for src, want := range map[string]string{
		`{"loops": {"plann": {}}}`:                        `did you mean "plan"?`,
		`{"loops": {"plan": {"role": "boss"}}}`:           `loops.plan.role "boss" is not a model role`,
		`{"loops": {"plan": {"systemPrompt": " "}}}`:      `loops.plan.systemPrompt is empty`,
		`{"loops": {"plan": {"toolWhitelist": ["a b"]}}}`: `toolWhitelist entries must be tool names`,
		`{"loops": {"plan": {"tools": []}}}`:              `unknown field "tools"`,
	} {
		_, err := Load(write(src), "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", src, want, err)
		}
	}
	// A project may not change the loops.
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".opair"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".opair", "config.json"), []byte(`{"loops": {"plan": {"role": "driver"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(write(`{}`), project); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Errorf("project loops: %v", err)
	}
}

func TestMCPServersSection(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	write := func(src string) {
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpServers": {"github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"LOG_LEVEL": "info"}, "passEnv": ["GITHUB_TOKEN"]}}}`)
	cfg, err := Load(p, "")
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.MCPServers["github"]
	if g.Command != "github-mcp-server" || len(g.Args) != 1 || g.Env["LOG_LEVEL"] != "info" || g.PassEnv[0] != "GITHUB_TOKEN" {
		t.Errorf("%+v", g)
	}
	for src, want := range map[string]string{
		`{"mcpServers": {"gh": {"args": []}}}`:                                       `missing "command"`,
		`{"mcpServers": {"gh": {"command": "./server"}}}`:                            `relative path`,
		`{"mcpServers": {"gh": {"command": "s", "env": {"GITHUB_TOKEN": "ghp_x"}}}}`: `passEnv`,
		`{"mcpServers": {"gh": {"command": "s", "env": {"LD_PRELOAD": "x"}}}}`:       `may not set "LD_PRELOAD"`,
		`{"mcpServers": {"g_h": {"command": "s"}}}`:                                  `not a server name`,
		`{"mcpServers": {"gh": {"command": "s", "passEnv": ["A B"]}}}`:               `variable names`,
		`{"mcpServers": {"gh": {"comand": "s"}}}`:                                    `did you mean "command"?`,
	} {
		write(src)
		if _, err := Load(p, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", src, want, err)
		}
	}
}
