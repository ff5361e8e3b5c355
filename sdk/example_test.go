package sdk_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/opair-dev/opair/sdk"
)

// A plugin that serves one handler type, "wordCount", which counts the words
// of the text the model passes. The tool file that uses it:
//
//	{"schema": {"type": "function", "function": {"name": "countWords", "description": "…",
//	   "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}},
//	 "reads": "none",
//	 "handler": {"type": "wordCount", "config": {"min": 1}}}
func Example() {
	count := func(ctx context.Context, call *sdk.Call, p sdk.Progress) (*sdk.Result, error) {
		var args struct{ Text string }
		if err := call.Decode(&args); err != nil {
			return nil, err
		}
		var cfg struct{ Min int }
		if err := call.Config(&cfg); err != nil {
			return nil, err
		}
		n := len(strings.Fields(args.Text))
		if n < cfg.Min {
			return sdk.Errorf("need at least %d words, got %d", cfg.Min, n), nil // the model sees this and can correct it
		}
		_ = p.Status("counted")
		return &sdk.Result{
			Content: []sdk.Content{{Text: fmt.Sprint(n)}},
			Summary: fmt.Sprintf("%d words", n),
			Details: map[string]int{"words": n},
		}, nil
	}
	plugin := sdk.Plugin{
		Version: "1.0.0",
		Types: map[string]sdk.Type{
			"wordCount": {Description: "Counts words.", Handler: sdk.HandlerFunc(count)},
		},
	}
	_ = plugin
	// In the plugin's main: sdk.Serve(plugin)
}

// Errorf is the result of an expected failure: the model sees the message.
func ExampleErrorf() {
	r := sdk.Errorf("no such issue: %d", 42)
	fmt.Println(r.IsError, r.Content[0].Text)
	// Output: true no such issue: 42
}
