// Package permission decides whether a tool call is allowed, must be asked
// of the human, or is denied (SPEC §3.4). It is a pure function of the tool,
// the mode and the rules: it never prompts and never runs anything.
package permission
