// Command opair-plugin-builtin serves the ten builtin file handler types
// (listDirectory, readFile, readFileLines, readFileBytes, findInProject,
// createFile, editFile, deleteFile, chmodFile, replaceInProject). The host
// decides permissions; this plugin re-checks every path against the tool's
// scope, never writes a protected path, and writes atomically.
package main

import (
	"github.com/opair-dev/opair/plugins/builtin/files"
	"github.com/opair-dev/opair/sdk"
)

func main() {
	sdk.Serve(sdk.Plugin{Version: "1.0.0", Types: files.Types()})
}
