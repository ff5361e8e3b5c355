// Package schema publishes the JSON Schema (draft 2020-12) for Opair tool
// files, so that editors can validate a tool file while it is being written.
//
// The schema mirrors the per-file structural rules of the tool-file validator;
// it is documentation for editors, not the check the host relies on. Rules
// that need more than one file or the installed plugins (file name, unique
// slash commands, derived permission categories) are only in the validator.
package schema

import _ "embed"

// ToolID is the $id of the tool-file schema. It is an identifier only;
// nothing is fetched from it.
const ToolID = "https://opair.dev/schema/tool.schema.json"

// Tool is the JSON Schema for one tool file (tool.schema.json).
//
//go:embed tool.schema.json
var Tool []byte

// Config is the JSON Schema for the user and project config files
// (config.schema.json).
//
//go:embed config.schema.json
var Config []byte
