// Command findbench times one findInProject query through the builtin
// plugin, started by the host's plugin manager as in a session, against a
// command that runs the same query (ripgrep), for bench/findinproject.sh.
//
//	findbench -plugin BIN -root DIR [-runs N] [-pout FILE] [-cout FILE] [-literal] [-i] -pattern P -- CMD ARGS...
//
// After one untimed warm-up run of each (page cache, plugin start), it runs
// the two N times, alternating, so that both see the same machine load, and
// prints the median wall times in seconds, the plugin's first: "0.1234
// 0.0987". It writes the matches of the last runs as "path:line" lines, in
// output order, to the two files. The command runs in ROOT and its stdout
// must be "path:line:text" lines (rg --no-heading -n); exit status 1 (no
// match) is not an error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opair-dev/opair/host/plugin"
	"github.com/opair-dev/opair/internal/childenv"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// maxResults asks for every match (the plugin's cap on maxResults is far
// above the match counts of the benchmark's queries).
const maxResults = 1_000_000

func main() {
	pluginBin := flag.String("plugin", "", "the opair-plugin-builtin binary")
	root := flag.String("root", "", "the project root to search")
	runs := flag.Int("runs", 5, "timed runs of each")
	pattern := flag.String("pattern", "", "findInProject's pattern")
	literal := flag.Bool("literal", false, "literal pattern")
	ci := flag.Bool("i", false, "case-insensitive")
	pout := flag.String("pout", "", "write the plugin's matches (path:line) here")
	cout := flag.String("cout", "", "write the command's matches (path:line) here")
	flag.Parse()
	if *runs < 1 || *pluginBin == "" || *root == "" || *pattern == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	prun, stop, err := pluginRunner(*pluginBin, *root, *pattern, *literal, *ci)
	if err != nil {
		fail(err)
	}
	defer stop()
	crun := execRunner(*root, flag.Args())
	var pt, ct []time.Duration
	var plast, clast []byte
	for i := -1; i < *runs; i++ { // -1: warm-up
		d, b, err := timed(prun)
		if err != nil {
			fail(err)
		}
		plast = b
		if i >= 0 {
			pt = append(pt, d)
		}
		d, b, err = timed(crun)
		if err != nil {
			fail(err)
		}
		clast = b
		if i >= 0 {
			ct = append(ct, d)
		}
	}
	for _, o := range []struct {
		name string
		out  []byte
	}{{*pout, plast}, {*cout, clast}} {
		if o.name != "" {
			if err := os.WriteFile(o.name, pathLines(o.out), 0o644); err != nil {
				fail(err)
			}
		}
	}
	fmt.Printf("%.4f %.4f\n", median(pt).Seconds(), median(ct).Seconds())
}

func timed(run func() ([]byte, error)) (time.Duration, []byte, error) {
	t0 := time.Now()
	b, err := run()
	return time.Since(t0), b, err
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "findbench:", err)
	os.Exit(1)
}

// pluginRunner starts the builtin plugin on root and returns a function
// that runs one findInProject call and returns its text.
func pluginRunner(bin, root, pattern string, literal, ci bool) (func() ([]byte, error), func(), error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, nil, err
	}
	m, err := plugin.Start(context.Background(), []plugin.Spec{{Name: "opair-plugin-builtin", Path: abs}}, plugin.Options{
		ProjectRoot: root,
		Env:         childenv.Build(os.Environ()),
	})
	if err != nil {
		return nil, nil, err
	}
	if len(m.StartErrors) > 0 {
		m.Close()
		return nil, nil, errors.Join(m.StartErrors...)
	}
	hb, _ := json.Marshal(map[string]any{"type": "findInProject"})
	ab, _ := json.Marshal(map[string]any{"pattern": pattern, "literal": literal, "caseInsensitive": ci, "maxResults": maxResults})
	run := func() ([]byte, error) {
		res, err := m.Invoke(context.Background(), &pluginv1.InvokeRequest{ToolName: "findInProject", HandlerType: "findInProject", HandlerJson: hb, ArgumentsJson: ab}, nil)
		if err != nil {
			return nil, err
		}
		var text []byte
		for _, c := range res.Content {
			text = append(text, c.GetText()...)
		}
		if res.IsError {
			return nil, fmt.Errorf("findInProject refused: %s", text)
		}
		var d struct {
			Matches   int  `json:"matches"`
			Shown     int  `json:"shown"`
			Truncated bool `json:"truncated"`
		}
		if err := json.Unmarshal(res.DetailsJson, &d); err != nil {
			return nil, fmt.Errorf("details: %w", err)
		}
		if d.Truncated || d.Shown != d.Matches {
			return nil, fmt.Errorf("findInProject shows %d of %d matches (truncated %v): raise maxResults", d.Shown, d.Matches, d.Truncated)
		}
		return text, nil
	}
	return run, m.Close, nil
}

// execRunner runs a command in dir and returns its stdout.
func execRunner(dir string, args []string) func() ([]byte, error) {
	return func() ([]byte, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
			err = nil // no match
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return stdout.Bytes(), nil
	}
}

// pathLines keeps the "path:line" of each "path:line:text" line. Lines
// without that shape (the plugin's notes, such as "(skipped 3 binary
// files)") are dropped.
func pathLines(out []byte) []byte {
	var b bytes.Buffer
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		p, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		n, _, ok := bytes.Cut(rest, []byte(":"))
		if !ok || len(n) == 0 || strings.Trim(string(n), "0123456789") != "" {
			continue
		}
		b.Write(p)
		b.WriteByte(':')
		b.Write(n)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
