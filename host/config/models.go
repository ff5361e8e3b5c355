package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/opair-dev/opair/internal/diag"
	"github.com/opair-dev/opair/internal/strictjson"
)

// The models section (SPEC §5, §6): which provider and model serves each
// role, with the role's options. Only the user config may hold it: a
// repository must not be able to redirect your model, or your key, to a
// server of its choosing.
//
//	"models": {
//	  "providers": {
//	    "local":     {"type": "openai", "baseURL": "http://localhost:11434/v1"},
//	    "anthropic": {"type": "anthropic", "apiKeyEnv": "ANTHROPIC_API_KEY"}
//	  },
//	  "roles": {
//	    "driver":    {"provider": "anthropic", "model": "claude-sonnet-4-5", "maxTokens": 8192},
//	    "navigator": {"provider": "local", "model": "qwen3-coder"}
//	  }
//	}
//
// Config.Role resolves a role: its own entry, else the driver's, else the
// standard environment variables (OPENAI_BASE_URL, OPENAI_API_KEY,
// ANTHROPIC_API_KEY, OPAIR_MODEL), else an error that shows what to add.
//
// The section yields plain values; package provider turns them into a
// client (provider.FromRole), so that neither package imports the other.

// The provider types.
const (
	ProviderOpenAI    = "openai"    // OpenAI-compatible chat completions
	ProviderAnthropic = "anthropic" // Anthropic messages
)

// The providers' default base URLs.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
)

// The standard variables that configure every role when the models section
// does not.
const (
	EnvModel            = "OPAIR_MODEL"
	EnvProvider         = "OPAIR_PROVIDER" // openai or anthropic, when both keys are set
	EnvOpenAIKey        = "OPENAI_API_KEY"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvAnthropicKey     = "ANTHROPIC_API_KEY"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// Bounds of a role's options.
const (
	MaxTemperature   = 2.0
	MaxMaxTokens     = 10_000_000
	MinContextWindow = 1024
	MaxContextWindow = 100_000_000
)

// RoleNames are the roles the models section may configure. A role that is
// not configured uses the driver's model.
var RoleNames = []string{"driver", "navigator", "planner", "reviewer"}

// ReasoningEfforts are the values of a role's reasoningEffort.
var ReasoningEfforts = []string{"low", "medium", "high"}

// Role is a model role, resolved: the provider that serves it, the model,
// and the options to send with each request.
type Role struct {
	Name string // driver, navigator, planner or reviewer
	// Provider names the entry of models.providers; "" when configured by
	// the environment.
	Provider     string
	ProviderType string // ProviderOpenAI or ProviderAnthropic
	// BaseURL is the API's root, the type's default filled in.
	BaseURL string
	// APIKeyEnv names the variable that holds the key; "" when no key is
	// sent (a local server that needs none).
	APIKeyEnv       string
	Model           string
	Temperature     *float64 // nil: the model's default
	MaxTokens       int      // 0: the provider's default
	ReasoningEffort string   // "": the model's default
	ContextWindow   int      // 0: unknown, the session's default
	// Source says where the role was configured: "~/.config/opair/config.json:12",
	// or "environment (OPENAI_API_KEY, OPAIR_MODEL)".
	Source string
}

var (
	modelsKeys    = []string{"providers", "roles"}
	providerKeys  = []string{"type", "baseURL", "apiKeyEnv"}
	roleKeys      = []string{"provider", "model", "temperature", "maxTokens", "reasoningEffort", "contextWindow"}
	providerTypes = []string{ProviderOpenAI, ProviderAnthropic}

	providerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	envNameRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

const modelsExample = `{"providers": {"openai": {"type": "openai", "apiKeyEnv": "OPENAI_API_KEY"}}, "roles": {"driver": {"provider": "openai", "model": "gpt-5"}}}`

// modelProvider is one entry of models.providers as checked.
type modelProvider struct {
	typ, baseURL, keyEnv string
	ok                   bool // no problem was reported
}

// models checks the models section and resolves its roles.
func (c *checker) models(m *strictjson.Member, p *parsed) {
	obj := c.object(m, modelsExample)
	if obj == nil {
		return
	}
	c.keys(obj, "models", modelsKeys)
	p.models = map[string]Role{}
	providers := map[string]modelProvider{}
	if pn := c.field(obj, "providers", "models", strictjson.Object, `{"openai": {"type": "openai", "apiKeyEnv": "OPENAI_API_KEY"}}`); pn != nil {
		for i := range pn.Members {
			pm := &pn.Members[i]
			providers[pm.Key] = c.modelProvider(pm)
		}
	}
	rn := c.field(obj, "roles", "models", strictjson.Object, `{"driver": {"provider": "openai", "model": "gpt-5"}}`)
	if rn == nil {
		return
	}
	for i := range rn.Members {
		rm := &rn.Members[i]
		if !slices.Contains(RoleNames, rm.Key) {
			c.unknownKey(rm, "models.roles", RoleNames, RoleNames, "roles")
			continue
		}
		if r, ok := c.modelRole(rm, providers); ok {
			p.models[rm.Key] = r
		}
	}
}

func (c *checker) modelProvider(pm *strictjson.Member) modelProvider {
	where := "models.providers." + pm.Key
	n0 := len(c.diags)
	if !providerNameRE.MatchString(pm.Key) {
		c.errAt(pm.KeyStart, `name a provider with letters, digits, ".", "_" and "-", e.g. "local" or "openrouter"`, "%q is not a provider name", pm.Key)
	}
	v := pm.Value
	if v.Kind != strictjson.Object {
		c.errAt(v.Start, `a provider is an object such as {"type": "openai", "baseURL": "http://localhost:11434/v1"}`, "%s must be an object, not a %s", where, v.Kind)
		return modelProvider{}
	}
	for i := range v.Members {
		km := &v.Members[i]
		switch k := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(km.Key)); {
		case slices.Contains(providerKeys, km.Key):
		case k == "apikey" || k == "key" || k == "token" || k == "apitoken" || k == "secret":
			c.errAt(km.KeyStart, `a key never goes in the config: put it in an environment variable and name that variable with "apiKeyEnv", e.g. "apiKeyEnv": "OPENAI_API_KEY"`,
				"unknown field %q in %s", km.Key, where)
		default:
			c.unknownKey(km, where, providerKeys, providerKeys, "fields")
		}
	}
	var mp modelProvider
	if tn := c.field(v, "type", where, strictjson.String, `"openai" or "anthropic"`); tn != nil {
		switch l := strings.ToLower(tn.Str); {
		case slices.Contains(providerTypes, tn.Str):
			mp.typ = tn.Str
		case slices.Contains(providerTypes, l):
			c.errAt(tn.Start, fmt.Sprintf("write it in lower case: %q", l), "%s.type %q is not one of openai, anthropic", where, tn.Str)
		default:
			c.errAt(tn.Start, `use "openai" for OpenAI and every OpenAI-compatible server (Ollama, llama.cpp, vLLM, OpenRouter, …), or "anthropic"`,
				"%s.type %q is not one of openai, anthropic", where, tn.Str)
		}
	} else if v.Member("type") == nil {
		c.errAt(v.Start, `add "type": "openai" (OpenAI and compatible servers) or "anthropic"`, "%s is missing \"type\"", where)
	}
	if un := c.field(v, "baseURL", where, strictjson.String, `"http://localhost:11434/v1"`); un != nil {
		mp.baseURL = c.baseURL(un, where, mp.typ)
	}
	if kn := c.field(v, "apiKeyEnv", where, strictjson.String, `"OPENAI_API_KEY"`); kn != nil {
		mp.keyEnv = c.apiKeyEnv(kn, where)
	}
	mp.ok = len(c.diags) == n0
	return mp
}

// baseURL checks a provider's base URL. It returns "" after reporting a
// problem.
func (c *checker) baseURL(n *strictjson.Node, where, typ string) string {
	example := "http://localhost:11434/v1"
	if typ == ProviderAnthropic {
		example = DefaultAnthropicBaseURL
	}
	u, err := url.Parse(n.Str)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		c.errAt(n.Start, fmt.Sprintf("write the API's root as an http:// or https:// URL, e.g. %q", example), "%s.baseURL %q is not an http(s) URL", where, n.Str)
	case u.User != nil:
		c.errAt(n.Start, "remove the user name and password: a key belongs in the variable that apiKeyEnv names", "%s.baseURL contains credentials", where)
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(n.Str, "?") || strings.HasSuffix(n.Str, "#"):
		c.errAt(n.Start, fmt.Sprintf("write the API's root without a query or fragment, e.g. %q", example), "%s.baseURL %q has a query or a fragment", where, n.Str)
	case strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions") || strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/messages"):
		root := strings.TrimRight(n.Str, "/")
		root = root[:strings.LastIndex(root, "/")]
		root = strings.TrimSuffix(root, "/chat")
		c.errAt(n.Start, fmt.Sprintf("write the API's root; the endpoint is added to it: %q", root), "%s.baseURL %q names an endpoint, not the API's root", where, n.Str)
	case typ == ProviderAnthropic && strings.TrimRight(u.Path, "/") == "/v1":
		c.errAt(n.Start, fmt.Sprintf("drop the /v1: the Anthropic client adds it (%q)", strings.TrimSuffix(strings.TrimRight(n.Str, "/"), "/v1")), "%s.baseURL %q ends in /v1", where, n.Str)
	default:
		return strings.TrimRight(n.Str, "/")
	}
	return ""
}

// apiKeyEnv checks the name of the variable holding a key. A value that
// looks like a key itself is never echoed in the message.
func (c *checker) apiKeyEnv(n *strictjson.Node, where string) string {
	s := n.Str
	switch {
	case looksLikeKey(s):
		c.errAt(n.Start, `apiKeyEnv is the NAME of the environment variable that holds the key, e.g. "OPENAI_API_KEY"; put the key in that variable (export OPENAI_API_KEY=…), never in this file, and since it was written here, consider revoking it`,
			"%s.apiKeyEnv looks like an API key, not the name of a variable", where)
	case strings.HasPrefix(s, "$") && envNameRE.MatchString(strings.Trim(s, "${}")):
		c.errAt(n.Start, fmt.Sprintf("write the name alone: %q", strings.Trim(s, "${}")), "%s.apiKeyEnv %q starts with $", where, s)
	case !envNameRE.MatchString(s):
		c.errAt(n.Start, `write the name of an environment variable: letters, digits and _, not starting with a digit, e.g. "OPENAI_API_KEY"`,
			"%s.apiKeyEnv %q is not a variable name", where, s)
	default:
		return s
	}
	return ""
}

// keyPrefixes start API keys and tokens of common providers.
var keyPrefixes = []string{"sk-", "sk_", "sk-ant-", "sk-proj-", "sk-or-", "xai-", "gsk_", "ghp_", "gho_", "github_pat_", "hf_", "AIza", "pplx-", "nvapi-", "r8_"}

// looksLikeKey reports whether a would-be variable name looks like a secret:
// a known key prefix, or a long run of letters and digits without the
// underscores that long variable names have, or with mixed case and digits.
func looksLikeKey(s string) bool {
	if strings.HasPrefix(s, "sk-") || (len(s) >= 20 && strings.Contains(s, "sk-")) {
		return true
	}
	if len(s) >= 16 {
		for _, p := range keyPrefixes {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
	}
	var lower, upper, digit, other bool
	for _, r := range s {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		case r != '_':
			other = true
		}
	}
	switch {
	case len(s) >= 32 && !strings.Contains(s, "_"):
		return true
	case len(s) >= 20 && lower && upper && digit:
		return true
	case len(s) >= 24 && other:
		return true
	}
	return false
}

// modelRole checks one role and resolves it against its provider.
func (c *checker) modelRole(rm *strictjson.Member, providers map[string]modelProvider) (Role, bool) {
	where := "models.roles." + rm.Key
	v := rm.Value
	if v.Kind != strictjson.Object {
		c.errAt(v.Start, `a role is an object such as {"provider": "openai", "model": "gpt-5"}`, "%s must be an object, not a %s", where, v.Kind)
		return Role{}, false
	}
	n0 := len(c.diags)
	c.keys(v, where, roleKeys)
	line, _ := c.lines.Position(v.Start)
	r := Role{Name: rm.Key, Source: fmt.Sprintf("%s:%d", c.source, line)}

	names := make([]string, 0, len(providers))
	for name := range providers {
		names = append(names, name)
	}
	sort.Strings(names)
	if pn := c.field(v, "provider", where, strictjson.String, `"openai"`); pn != nil {
		mp, ok := providers[pn.Str]
		switch {
		case !ok:
			hint := `define it in models.providers, e.g. "` + pn.Str + `": {"type": "openai", "baseURL": "http://localhost:11434/v1"}`
			if near := diag.Nearest(pn.Str, names); near != "" {
				hint = fmt.Sprintf("did you mean %q? (defined providers: %s)", near, strings.Join(names, ", "))
			} else if len(names) > 0 {
				hint = fmt.Sprintf("use one of the providers defined in models.providers (%s), or %s", strings.Join(names, ", "), hint)
			}
			c.errAt(pn.Start, hint, "%s.provider %q is not defined in models.providers", where, pn.Str)
		case !mp.ok:
			// Its own diagnostics say what is wrong.
			c.errAt(pn.Start, "fix the provider's entry first", "%s.provider %q has errors", where, pn.Str)
		default:
			r.Provider, r.ProviderType, r.BaseURL, r.APIKeyEnv = pn.Str, mp.typ, mp.baseURL, mp.keyEnv
			if r.BaseURL == "" {
				// The official API: its key is needed, from the standard
				// variable unless another is named.
				r.BaseURL = DefaultOpenAIBaseURL
				if mp.typ == ProviderAnthropic {
					r.BaseURL = DefaultAnthropicBaseURL
				}
				if r.APIKeyEnv == "" {
					r.APIKeyEnv = map[string]string{ProviderOpenAI: EnvOpenAIKey, ProviderAnthropic: EnvAnthropicKey}[mp.typ]
				}
			}
		}
	} else if v.Member("provider") == nil {
		c.errAt(v.Start, `add "provider": the name of an entry of models.providers`, "%s is missing \"provider\"", where)
	}

	if mn := c.field(v, "model", where, strictjson.String, `"gpt-5"`); mn != nil {
		switch {
		case mn.Str == "":
			c.errAt(mn.Start, `name the model as the provider does, e.g. "gpt-5", "claude-sonnet-4-5" or "qwen3-coder:30b"`, "%s.model is empty", where)
		case strings.IndexFunc(mn.Str, badPatternRune) >= 0:
			c.errAt(mn.Start, "model names have no white space or control characters", "%s.model %q contains white space or a control character", where, mn.Str)
		default:
			r.Model = mn.Str
		}
	} else if v.Member("model") == nil {
		c.errAt(v.Start, `add "model": the model's name as the provider knows it, e.g. "gpt-5"`, "%s is missing \"model\"", where)
	}

	if tn := c.field(v, "temperature", where, strictjson.Number, "0.2"); tn != nil {
		t, err := strconv.ParseFloat(tn.Num, 64)
		if err != nil || t < 0 || t > MaxTemperature {
			c.errAt(tn.Start, "use a temperature between 0 and 2, e.g. 0.2; remove it for the model's default", "%s.temperature %s is out of range", where, tn.Num)
		} else {
			r.Temperature = &t
		}
	}
	if n := c.field(v, "maxTokens", where, strictjson.Number, "8192"); n != nil {
		r.MaxTokens = c.integer(n, where+".maxTokens", 1, MaxMaxTokens, "a number of tokens greater than 0, e.g. 8192")
	}
	if n := c.field(v, "contextWindow", where, strictjson.Number, "200000"); n != nil {
		r.ContextWindow = c.integer(n, where+".contextWindow", MinContextWindow, MaxContextWindow, "the model's context window in tokens, at least 1024, e.g. 200000")
	}
	if en := c.field(v, "reasoningEffort", where, strictjson.String, `"medium"`); en != nil {
		switch l := strings.ToLower(en.Str); {
		case slices.Contains(ReasoningEfforts, en.Str):
			r.ReasoningEffort = en.Str
		case slices.Contains(ReasoningEfforts, l):
			c.errAt(en.Start, fmt.Sprintf("write it in lower case: %q", l), "%s.reasoningEffort %q is not one of low, medium, high", where, en.Str)
		default:
			c.errAt(en.Start, `use "low", "medium" or "high"; remove it for the model's default`, "%s.reasoningEffort %q is not one of low, medium, high", where, en.Str)
		}
	}
	return r, len(c.diags) == n0
}

// integer checks a whole number in [lo, hi]; it returns 0 after reporting a
// problem.
func (c *checker) integer(n *strictjson.Node, where string, lo, hi int64, want string) int {
	v, err := strconv.ParseInt(n.Num, 10, 64)
	switch {
	case err != nil && strings.ContainsAny(n.Num, ".eE") && !strings.HasPrefix(n.Num, "-"):
		c.errAt(n.Start, "write "+want, "%s %s is not an integer", where, n.Num)
	case err == nil && v >= lo && v <= hi:
		return int(v)
	default:
		c.errAt(n.Start, fmt.Sprintf("use %s (at most %d)", want, hi), "%s %s is out of range", where, n.Num)
	}
	return 0
}

// Role resolves the model role name: its entry in the models section, else
// the driver's entry (a role without its own model uses the driver's), else
// the standard variables read with env (os.Getenv in production), else an
// error that shows the lines to add, both as variables and as a models
// section. It also checks that the variable holding the role's key is set.
// c may be nil (no config at all).
func (c *Config) Role(name string, env func(string) string) (Role, error) {
	var models map[string]Role
	if c != nil {
		models = c.Models
	}
	if r, ok := models[name]; ok {
		return r, checkKey(r, env)
	}
	if r, ok := models["driver"]; ok {
		r.Name = name
		r.Source += " (the driver's, for " + name + ")"
		return r, checkKey(r, env)
	}
	r, found, err := roleFromEnv(name, env)
	if err != nil || found {
		return r, err
	}
	return Role{}, missingModel(name, models)
}

// checkKey reports a role whose key variable is not set.
func checkKey(r Role, env func(string) string) error {
	if r.APIKeyEnv == "" || env(r.APIKeyEnv) != "" {
		return nil
	}
	return fmt.Errorf("the %s role uses %s (%s), whose API key is read from $%s, which is not set; add to your shell profile:\n\n    export %s=<your key>",
		r.Name, r.BaseURL, r.Source, r.APIKeyEnv, r.APIKeyEnv)
}

// roleFromEnv configures a role from the standard variables. found is false
// when none of them is set.
func roleFromEnv(name string, env func(string) string) (r Role, found bool, err error) {
	model := env(EnvModel)
	oKey, oURL := env(EnvOpenAIKey), env(EnvOpenAIBaseURL)
	aKey, aURL := env(EnvAnthropicKey), env(EnvAnthropicBaseURL)
	choice := env(EnvProvider)
	if model == "" && oKey == "" && oURL == "" && aKey == "" && choice == "" {
		return Role{}, false, nil
	}
	typ := choice
	switch choice {
	case ProviderOpenAI, ProviderAnthropic:
	case "":
		switch {
		case (oKey != "" || oURL != "") && aKey != "":
			// Both are set: a Claude model goes to Anthropic.
			typ = ProviderOpenAI
			if strings.HasPrefix(model, "claude") {
				typ = ProviderAnthropic
			}
		case oKey != "" || oURL != "":
			typ = ProviderOpenAI
		case aKey != "":
			typ = ProviderAnthropic
		default:
			return Role{}, true, fmt.Errorf("%s=%s is set, but no provider is; also set one of:\n\n    export %s=<your key>\n    export %s=<your key>\n    export %s=http://localhost:11434/v1    # a local server such as Ollama",
				EnvModel, model, EnvOpenAIKey, EnvAnthropicKey, EnvOpenAIBaseURL)
		}
	default:
		return Role{}, true, fmt.Errorf("%s=%q is not a provider: use %s or %s", EnvProvider, choice, ProviderOpenAI, ProviderAnthropic)
	}
	r = Role{Name: name, ProviderType: typ, Model: model}
	var used []string
	note := func(vars ...string) {
		for _, v := range vars {
			if env(v) != "" {
				used = append(used, v)
			}
		}
	}
	if typ == ProviderOpenAI {
		r.BaseURL = DefaultOpenAIBaseURL
		if oURL != "" {
			r.BaseURL = strings.TrimRight(oURL, "/")
		}
		switch {
		case oKey != "":
			r.APIKeyEnv = EnvOpenAIKey
		case oURL == "":
			return Role{}, true, fmt.Errorf("%s is not set; add to your shell profile:\n\n    export %s=<your key>\n\n(or, for a local server such as Ollama, export %s=http://localhost:11434/v1)", EnvOpenAIKey, EnvOpenAIKey, EnvOpenAIBaseURL)
		}
		note(EnvProvider, EnvOpenAIBaseURL, EnvOpenAIKey, EnvModel)
	} else {
		r.BaseURL = DefaultAnthropicBaseURL
		if aURL != "" {
			r.BaseURL = strings.TrimRight(aURL, "/")
		}
		if aKey == "" {
			return Role{}, true, fmt.Errorf("%s is not set; add to your shell profile:\n\n    export %s=<your key>", EnvAnthropicKey, EnvAnthropicKey)
		}
		r.APIKeyEnv = EnvAnthropicKey
		note(EnvProvider, EnvAnthropicBaseURL, EnvAnthropicKey, EnvModel)
	}
	if u, perr := url.Parse(r.BaseURL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v := EnvOpenAIBaseURL
		if typ == ProviderAnthropic {
			v = EnvAnthropicBaseURL
		}
		return Role{}, true, fmt.Errorf("%s=%q is not an http(s) URL: write the API's root, e.g. http://localhost:11434/v1", v, env(v))
	}
	if model == "" {
		example := "gpt-5"
		if typ == ProviderAnthropic {
			example = "claude-sonnet-4-5"
		}
		return Role{}, true, fmt.Errorf("%s is not set: it names the model; add to your shell profile, with the model you want:\n\n    export %s=%s", EnvModel, EnvModel, example)
	}
	r.Source = "environment (" + strings.Join(used, ", ") + ")"
	return r, true, nil
}

// missingModel is the error of a role nothing configures: it shows both ways
// to configure it, as text to paste.
func missingModel(name string, models map[string]Role) error {
	file := "your config file"
	if p, err := Path(); err == nil {
		file = display(p)
	}
	var b strings.Builder
	if models != nil {
		provider, define := "openai", "and to its providers:\n\n    \"openai\": {\"type\": \"openai\", \"apiKeyEnv\": \"OPENAI_API_KEY\"}\n\n"
		for _, n := range RoleNames { // a provider the section uses already
			if r, ok := models[n]; ok && r.Provider != "" {
				provider, define = r.Provider, ""
				break
			}
		}
		roles := fmt.Sprintf("%q or \"driver\" role", name)
		if name == "driver" {
			roles = `"driver" role`
		}
		fmt.Fprintf(&b, "no model is configured for the %s role: the models section of %s has no %s, and none of the variables %s, %s, %s is set.\n", name, file, roles, EnvOpenAIKey, EnvAnthropicKey, EnvModel)
		fmt.Fprintf(&b, "Add to its roles, with the model you want:\n\n")
		fmt.Fprintf(&b, "    \"driver\": {\"provider\": %q, \"model\": \"gpt-5\"}\n\n%s", provider, define)
		fmt.Fprintf(&b, "or set, in your shell profile:\n\n    export %s=<your key>\n    export %s=gpt-5\n", EnvOpenAIKey, EnvModel)
		return fmt.Errorf("%s", b.String())
	}
	fmt.Fprintf(&b, "no model is configured for the %s role. Either set, in your shell profile:\n\n", name)
	fmt.Fprintf(&b, "    export %s=<your key>\n    export %s=gpt-5\n\n", EnvOpenAIKey, EnvModel)
	fmt.Fprintf(&b, "  or, for Anthropic:\n\n    export %s=<your key>\n    export %s=claude-sonnet-4-5\n\n", EnvAnthropicKey, EnvModel)
	fmt.Fprintf(&b, "  or, for a local OpenAI-compatible server such as Ollama:\n\n    export %s=http://localhost:11434/v1\n    export %s=qwen3-coder\n\n", EnvOpenAIBaseURL, EnvModel)
	fmt.Fprintf(&b, "or add to %s (inside its outer { }):\n\n", file)
	b.WriteString(`    "models": {
      "providers": {
        "openai": {"type": "openai", "apiKeyEnv": "OPENAI_API_KEY"}
      },
      "roles": {
        "driver": {"provider": "openai", "model": "gpt-5"}
      }
    }
`)
	b.WriteString("\nEvery role without an entry of its own (navigator, planner, reviewer) uses the driver's model.")
	return fmt.Errorf("%s", b.String())
}
