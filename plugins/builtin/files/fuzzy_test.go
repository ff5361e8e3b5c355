package files

import (
	"fmt"
	"strings"
	"testing"
)

func TestClosestRegion(t *testing.T) {
	body := "alpha\nbeta\ngamma\ndelta\nepsilon\n"
	tests := []struct {
		old        string
		start, end int
		trimEqual  bool
	}{
		{"gamma\ndelta", 3, 4, true},
		{"  gamma\n\tdelta  ", 3, 4, true},
		{"gamme\ndelto", 3, 4, false},
		{"beta\ngama\n", 2, 3, false},
		{"x\ny\nz\nw\nv\nu\nt", 1, 5, false}, // longer than the file: clamped
	}
	for _, tt := range tests {
		r := closestRegion(body, tt.old)
		if r.start != tt.start || r.end != tt.end || r.trimEqual != tt.trimEqual {
			t.Errorf("%q: got %+v", tt.old, r)
		}
	}
	// A large file takes the anchored path and still finds the region.
	var sb strings.Builder
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&sb, "line number %d of the file\n", i)
	}
	var old strings.Builder
	for i := 41000; i < 41050; i++ {
		fmt.Fprintf(&old, "line number %d of the file\n", i)
	}
	o := strings.Replace(old.String(), "41010 of", "41010 in", 1)
	r := closestRegion(sb.String(), o)
	if r.start != 41001 || r.end != 41050 {
		t.Errorf("large: %+v", r)
	}
}
