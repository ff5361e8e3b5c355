package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/opair-dev/opair/internal/binpath"
	"github.com/opair-dev/opair/internal/childenv"
	"github.com/opair-dev/opair/internal/strictjson"
)

// MCPServer is an MCP server whose tools become Opair tools named
// <server>_<tool>, in their own permission space.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	// Env are extra variables with literal values (no secrets).
	Env map[string]string
	// PassEnv names variables of your environment passed through as they
	// are: the way to hand a server its token, never written in the config.
	PassEnv []string
	Source  string
}

var (
	mcpServerKeys   = []string{"command", "args", "env", "passEnv"}
	mcpServerNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*$`)
)

const mcpServersExample = `{"github": {"command": "github-mcp-server", "args": ["stdio"], "passEnv": ["GITHUB_TOKEN"]}}`

// mcpServers checks the mcpServers section.
func (c *checker) mcpServers(m *strictjson.Member, p *parsed) {
	obj := c.object(m, mcpServersExample)
	if obj == nil {
		return
	}
	p.mcpServers = map[string]MCPServer{}
	for i := range obj.Members {
		sm := &obj.Members[i]
		where := "mcpServers." + sm.Key
		if !mcpServerNameRE.MatchString(sm.Key) {
			c.errAt(sm.KeyStart, "name a server with letters, digits and dashes, starting with a letter (its tools are named <server>_<tool>)", "%q is not a server name", sm.Key)
			continue
		}
		v := sm.Value
		if v.Kind != strictjson.Object {
			c.errAt(v.Start, "a server is an object such as "+mcpServersExample, "%s must be an object, not a %s", where, v.Kind)
			continue
		}
		c.keys(v, where, mcpServerKeys)
		line, _ := c.lines.Position(sm.KeyStart)
		s := MCPServer{Name: sm.Key, Env: map[string]string{}, Source: fmt.Sprintf("%s:%d", c.source, line)}
		n0 := len(c.diags)
		cn := c.field(v, "command", where, strictjson.String, `"github-mcp-server"`)
		switch {
		case v.Member("command") == nil:
			c.errAt(v.Start, `add "command": the server's executable, a name on PATH or an absolute path`, "%s is missing \"command\"", where)
		case cn != nil:
			if why := binpath.CheckName(cn.Str); why != "" {
				c.errAt(cn.Start, "name an executable on PATH or an absolute path", "%s.command %q %s", where, cn.Str, why)
			} else {
				s.Command = cn.Str
			}
		}
		if an := c.field(v, "args", where, strictjson.Array, `["stdio"]`); an != nil {
			for _, e := range an.Elems {
				if e.Kind != strictjson.String || strings.ContainsAny(e.Str, "\x00\n") {
					c.errAt(e.Start, "arguments are strings without NUL or newlines", "%s.args entries must be strings", where)
					continue
				}
				s.Args = append(s.Args, e.Str)
			}
		}
		if en := c.field(v, "env", where, strictjson.Object, `{"LOG_LEVEL": "info"}`); en != nil {
			for _, em := range en.Members {
				if why := childenv.Forbidden(em.Key); why != "" {
					hint := "remove it"
					if childenv.IsSecret(em.Key) {
						hint = `never write a secret in the config: list its name in "passEnv" to pass it from your environment`
					}
					c.errAt(em.KeyStart, hint, "%s.env may not set %q: %s", where, em.Key, why)
					continue
				}
				if em.Value.Kind != strictjson.String {
					c.errAt(em.Value.Start, "environment values are strings", "%s.env.%s must be a string", where, em.Key)
					continue
				}
				s.Env[em.Key] = em.Value.Str
			}
		}
		if pn := c.field(v, "passEnv", where, strictjson.Array, `["GITHUB_TOKEN"]`); pn != nil {
			for _, e := range pn.Elems {
				if e.Kind != strictjson.String || !envNameRE.MatchString(e.Str) {
					c.errAt(e.Start, "list variable names, e.g. \"GITHUB_TOKEN\"", "%s.passEnv entries must be variable names", where)
					continue
				}
				s.PassEnv = append(s.PassEnv, e.Str)
			}
		}
		if len(c.diags) == n0 {
			p.mcpServers[sm.Key] = s
		}
	}
}
