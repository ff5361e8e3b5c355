// Package session runs agent loops: the conversation with a model role, the
// tools a loop may offer in its mode, every tool call through the gate and
// its plugin, the human's answers, and the session log.
//
// It never decides a permission itself (host/gate and host/permission do)
// and never does a handler's work (the plugins do); it never talks to the
// terminal (an Asker and an Observer do).
package session

import (
	"path"
	"slices"

	"github.com/opair-dev/opair/host/config"
)

// ApplyConfig applies the user's adjustments (the config's loops section) to
// loops: a role, a system prompt or a whitelist set there replaces the
// default.
func ApplyConfig(loops map[string]Loop, cfg map[string]config.Loop) {
	for name, c := range cfg {
		l, ok := loops[name]
		if !ok {
			continue
		}
		if c.Role != "" {
			l.Role = c.Role
		}
		if c.System != "" {
			l.System = c.System
		}
		if c.ToolWhitelist != nil {
			l.Whitelist = c.ToolWhitelist
		}
		loops[name] = l
	}
}

// Loop is one kind of agent conversation (SPEC §3.3).
type Loop struct {
	Name   string
	Role   string // the model role: driver, navigator, planner, reviewer
	System string // the system prompt
	// Whitelist names the tools the loop may offer (wildcards allowed:
	// "git*"); empty offers every available tool.
	Whitelist []string
	SubAgent  bool
}

// Offers reports whether the loop's whitelist includes a tool.
func (l Loop) Offers(tool string) bool {
	if len(l.Whitelist) == 0 {
		return true
	}
	return slices.ContainsFunc(l.Whitelist, func(p string) bool {
		ok, _ := path.Match(p, tool)
		return ok || p == tool
	})
}

const commonPrompt = `You are working in the user's project through tools that Opair gives you. You have no shell: each tool runs one specific program or one bounded file operation, and the human approves what needs approval. Paths are relative to the project root. Read before you edit: an edit of a file you have not read in this session, or that changed since you read it, is refused. When a call is denied, do not retry it unchanged; read the reason, and ask the human (askQuestion) if you need something only they can allow. Be concise; finish with a short answer that says what you did and what is left.`

// DefaultLoops are the loops Opair defines itself.
func DefaultLoops() map[string]Loop {
	return map[string]Loop{
		"navigator": {Name: "navigator", Role: "navigator", System: commonPrompt + ` You are in navigator mode: you read, search and run tests; you cannot change the project. Propose changes for the human to make, or to approve in driver mode.`},
		"driver":    {Name: "driver", Role: "driver", System: commonPrompt + ` You are in driver mode: you may change the project; writes beyond ordinary project files are asked of the human.`},
		"plan": {Name: "plan", Role: "planner", SubAgent: true,
			System:    `You are a planning sub-agent. Explore the project read-only with the tools you have and return a concise, numbered plan for the task: the files to change, the changes, the tests to run, and the risks. Do not change anything.`,
			Whitelist: []string{"readProjectFile", "readProjectFileLines", "listProjectDirectory", "findInProject", "gitStatus", "gitDiff", "gitLog", "gitShow"}},
		"reviewDiff": {Name: "reviewDiff", Role: "reviewer", SubAgent: true,
			System:    `You are a review sub-agent. Read the working tree's diff (gitDiff) and the code around it, and return a concise review: bugs first, then risks, then style, each with file and line. Do not change anything.`,
			Whitelist: []string{"gitDiff", "gitStatus", "gitLog", "gitShow", "readProjectFile", "readProjectFileLines", "findInProject", "listProjectDirectory"}},
	}
}
