package diag

import "testing"

func TestNearest(t *testing.T) {
	allowed := []string{"denyArgs", "allowArgs", "subcommand", "scope"}
	for w, want := range map[string]string{"denyarg": "denyArgs", "DenyArgz": "denyArgs", "scop": "scope", "subcomand": "subcommand", "zzzzzz": "", "": ""} {
		if got := Nearest(w, allowed); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", w, got, want)
		}
	}
	if CaseVariant("DENYARGS", allowed) != "denyArgs" || CaseVariant("deny", allowed) != "" {
		t.Error("CaseVariant")
	}
	e := Errors{{File: "a.json", Line: 2, Col: 3, Msg: "m", Hint: "h"}, {File: "b.json", Msg: "whole file"}, {File: "a.json", Line: 4, Col: 1, Msg: "n"}}
	if e.Error() != "a.json:2:3: m\n\thint: h\nb.json: whole file\na.json:4:1: n" {
		t.Errorf("Error() = %q", e.Error())
	}
	if f := e.Files(); len(f) != 2 || f[0] != "a.json" || f[1] != "b.json" {
		t.Errorf("Files() = %v", f)
	}
}
