// Package defaults holds the default tool set embedded in the opair binary:
// one JSON tool file per tool, the same format a user writes into the tools
// directory. `opair init` copies them there without overwriting a user's
// file.
//
// The files are data only. They are validated by the tool-file validator like
// any other tool file; this package never interprets them.
package defaults

import "embed"

// FS holds the default tool files, as tools/<snake_case name>.json.
//
//go:embed tools/*.json
var FS embed.FS
