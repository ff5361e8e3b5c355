package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/opair-dev/opair/internal/strictjson"
)

// LoopNames are the loops Opair defines; the config may adjust each.
var LoopNames = []string{"navigator", "driver", "plan", "reviewDiff"}

// Loop is the user's adjustment of one loop: any field left empty keeps the
// loop's default.
type Loop struct {
	Role          string   // the model role the loop uses
	System        string   // replaces the system prompt
	ToolWhitelist []string // nil: the default whitelist; may use * wildcards
	Source        string
}

var loopKeys = []string{"role", "systemPrompt", "toolWhitelist"}

const loopsExample = `{"plan": {"role": "planner", "toolWhitelist": ["readProjectFile", "findInProject", "git*"]}}`

// loops checks the loops section: per loop, its role, system prompt and
// tool whitelist.
func (c *checker) loops(m *strictjson.Member, p *parsed) {
	obj := c.object(m, loopsExample)
	if obj == nil {
		return
	}
	p.loops = map[string]Loop{}
	for i := range obj.Members {
		lm := &obj.Members[i]
		if !slices.Contains(LoopNames, lm.Key) {
			c.unknownKey(lm, "loops", LoopNames, LoopNames, "loops")
			continue
		}
		where := "loops." + lm.Key
		v := lm.Value
		if v.Kind != strictjson.Object {
			c.errAt(v.Start, `a loop is an object such as {"role": "planner"}`, "%s must be an object, not a %s", where, v.Kind)
			continue
		}
		c.keys(v, where, loopKeys)
		line, _ := c.lines.Position(lm.KeyStart)
		l := Loop{Source: fmt.Sprintf("%s:%d", c.source, line)}
		if rn := c.field(v, "role", where, strictjson.String, `"planner"`); rn != nil {
			if !slices.Contains(RoleNames, rn.Str) {
				c.errAt(rn.Start, "use one of: "+strings.Join(RoleNames, ", "), "%s.role %q is not a model role", where, rn.Str)
			} else {
				l.Role = rn.Str
			}
		}
		if sn := c.field(v, "systemPrompt", where, strictjson.String, `"You are …"`); sn != nil {
			if strings.TrimSpace(sn.Str) == "" {
				c.errAt(sn.Start, "write the prompt, or remove the field to keep the default", "%s.systemPrompt is empty", where)
			} else {
				l.System = sn.Str
			}
		}
		if wn := c.field(v, "toolWhitelist", where, strictjson.Array, `["readProjectFile", "git*"]`); wn != nil {
			l.ToolWhitelist = []string{}
			for _, e := range wn.Elems {
				if e.Kind != strictjson.String || strings.TrimSpace(e.Str) == "" || strings.ContainsAny(e.Str, " \t\n") {
					c.errAt(e.Start, `entries are tool names or patterns such as "git*"`, "%s.toolWhitelist entries must be tool names", where)
					continue
				}
				l.ToolWhitelist = append(l.ToolWhitelist, e.Str)
			}
		}
		p.loops[lm.Key] = l
	}
}
