// Command opair-plugin-jsonpointer is an example third-party Opair plugin.
// It serves the handler type "jsonPointer": a tool that reads one JSON file
// of the project, named in the tool file's handler.config, and returns the
// value at the JSON pointer the model asks for (RFC 6901).
//
// Build it into the plugins directory and write a tool file that uses it:
//
//	go build -o ~/.config/opair/plugins/ ./examples/opair-plugin-jsonpointer
//
//	{
//	  "schema": {"type": "function", "function": {
//	    "name": "packageField",
//	    "description": "Read one field of package.json by JSON pointer, e.g. /version.",
//	    "parameters": {"type": "object", "properties": {"pointer": {"type": "string"}}, "required": ["pointer"]}}},
//	  "reads": "project",
//	  "handler": {"type": "jsonPointer", "config": {"file": "package.json"}}
//	}
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opair-dev/opair/sdk"
)

type config struct {
	File string `json:"file"`
}

type args struct {
	Pointer string `json:"pointer"`
}

// maxFile bounds what the plugin reads.
const maxFile = 4 << 20

// validate runs when the host loads a tool file using this type: a bad
// config is reported with the file's other validation errors.
func validate(_ context.Context, v *sdk.Validation) []sdk.Diagnostic {
	var c config
	if err := v.Config(&c); err != nil {
		return []sdk.Diagnostic{{Summary: err.Error(), Pointer: "/config"}}
	}
	switch {
	case c.File == "":
		return []sdk.Diagnostic{{Summary: `config.file is required: the JSON file to read, relative to the project root, e.g. "package.json"`, Pointer: "/config/file"}}
	case filepath.IsAbs(c.File) || !filepath.IsLocal(c.File):
		return []sdk.Diagnostic{{Summary: fmt.Sprintf("config.file %q must be a path inside the project, relative to its root", c.File), Pointer: "/config/file"}}
	}
	return nil
}

func invoke(ctx context.Context, call *sdk.Call, p sdk.Progress) (*sdk.Result, error) {
	var c config
	if err := call.Config(&c); err != nil {
		return nil, err
	}
	var a args
	if err := call.Decode(&a); err != nil {
		return nil, err
	}
	_ = p.Status("reading " + c.File)
	// os.Root keeps the read inside the project, whatever links the
	// project holds.
	root, err := os.OpenRoot(call.ProjectRoot)
	if err != nil {
		return nil, fmt.Errorf("opening the project root: %w", err)
	}
	defer root.Close()
	f, err := root.Open(c.File)
	if err != nil {
		return sdk.Errorf("cannot read %s: %v", c.File, err), nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", c.File, err)
	}
	if len(data) > maxFile {
		return sdk.Errorf("%s is larger than %d bytes", c.File, maxFile), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return sdk.Errorf("%s is not valid JSON: %v", c.File, err), nil
	}
	v, err := resolve(doc, a.Pointer)
	if err != nil {
		return sdk.Errorf("%s: %v", c.File, err), nil
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return &sdk.Result{
		Content: []sdk.Content{{Text: string(out)}},
		Summary: fmt.Sprintf("%s%s", c.File, a.Pointer),
		Details: map[string]string{"file": c.File, "pointer": a.Pointer},
	}, nil
}

// resolve walks an RFC 6901 JSON pointer.
func resolve(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("pointer %q must start with /", ptr)
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, fmt.Errorf("no member %q", tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("no element %q in an array of %d", tok, len(v))
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("cannot index a %T with %q", cur, tok)
		}
	}
	return cur, nil
}

func main() {
	sdk.Serve(sdk.Plugin{
		Version: "1.0.0",
		Types: map[string]sdk.Type{
			"jsonPointer": {
				Description: "Reads the value at a JSON pointer in a JSON file of the project.",
				Handler:     sdk.HandlerFunc(invoke),
				Validate:    validate,
			},
		},
	})
}
