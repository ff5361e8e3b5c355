package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/opair-dev/opair/plugins/builtin/udiff"
	"github.com/opair-dev/opair/sdk"
)

// maxDiffText bounds the diff quoted in a result's text; maxDiffDetails the
// diff kept in its details (what the approval prompt shows).
const (
	maxDiffText    = 64 << 10
	maxDiffDetails = 8 << 20
)

// FileChange is one file a writing call changes (or would change), with
// the SHA-256 of its content before and after; "" when the file does not
// exist on that side.
type FileChange struct {
	Path         string `json:"path"`
	BeforeSHA256 string `json:"before_sha256"`
	AfterSHA256  string `json:"after_sha256"`
}

// expected returns the approved before-hashes (path → SHA-256), and
// whether the call carries any.
func (e *env) expected() (map[string]string, bool) {
	var x struct {
		ExpectSHA256 *map[string]string `json:"expectSha256"`
	}
	if err := json.Unmarshal(e.call.Args, &x); err != nil || x.ExpectSHA256 == nil {
		return nil, false
	}
	m := *x.ExpectSHA256
	if m == nil {
		m = map[string]string{}
	}
	return m, true
}

// errStale reports content that changed since the approved diff.
var errStale = errors.New("changed since the diff was approved")

// checkExpected compares a file's current content hash with the approved
// one; keys are the project-relative paths the details named (the path as
// the model wrote it is accepted too).
func checkExpected(want map[string]string, ok bool, rel, input, current string) error {
	if !ok {
		return nil
	}
	h, found := want[rel]
	if !found && input != "" {
		h, found = want[input]
	}
	if !found || !strings.EqualFold(h, current) {
		return errStale
	}
	return nil
}

func staleResult(rel string) *sdk.Result {
	return sdk.Errorf("refused: %s changed since the diff was approved (its content is no longer the one the diff was computed from); nothing was written. Read it again and redo the change.", rel)
}

// diffFor returns the unified diff of one file's change.
func diffFor(rel string, before, after []byte, existedBefore, existsAfter bool) string {
	from, to := "a/"+rel, "b/"+rel
	if !existedBefore {
		from = "/dev/null"
	}
	if !existsAfter {
		to = "/dev/null"
	}
	return udiff.Unified(from, to, string(before), string(after), udiff.DefaultContext)
}

// capText cuts s to max bytes (at a line start when it can), with a marker.
func capText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := s[:max]
	if i := strings.LastIndexByte(cut, '\n'); i > max/2 {
		cut = cut[:i+1]
	}
	return cut + fmt.Sprintf("… [diff cut: %d more bytes]\n", len(s)-len(cut)), true
}

// writeResult builds the result of a writing call: text for the model,
// details with the diff and the hashes.
func writeResult(dry bool, text, summary, diff string, files []FileChange, extra map[string]any) *sdk.Result {
	d, cut := capText(diff, maxDiffDetails)
	det := map[string]any{"diff": d, "files": files}
	if dry {
		det["dryRun"] = true
	}
	if cut {
		det["diffTruncated"] = true
	}
	for k, v := range extra {
		det[k] = v
	}
	if dry {
		t, _ := capText(diff, maxDiffText)
		if t == "" {
			t = "(no change)\n"
		}
		text = "Dry run, nothing was changed. " + text + "\n\n" + t
		summary = "preview: " + summary
	}
	return &sdk.Result{Content: []sdk.Content{{Text: text}}, Summary: summary, Details: det}
}
