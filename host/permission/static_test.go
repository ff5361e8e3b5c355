package permission

import (
	"testing"

	tf "github.com/opair-dev/opair/host/toolfile"
)

// TestCategoriesTable walks the table of SPEC §3.4 for every read × write
// category, trusted and untrusted, in both modes.
func TestCategoriesTable(t *testing.T) {
	for _, mode := range []Mode{Navigator, Driver} {
		for _, r := range tf.ReadCategories {
			for _, w := range tf.WriteCategories {
				for _, untrusted := range []bool{false, true} {
					want := Allow
					if r == tf.External {
						want = Ask
					}
					switch w {
					case tf.None, tf.Artifacts:
					case tf.Project:
						if mode == Navigator {
							want = NotOffered
						}
					default:
						if mode == Navigator {
							want = NotOffered
						} else {
							want = Stricter(want, Ask)
						}
					}
					if untrusted {
						want = Stricter(want, Ask)
					}
					got := Categories(r, w, untrusted, mode)
					if got.Action != want {
						t.Errorf("%s reads %s writes %s untrusted %v: %s (%s), want %s", mode, r, w, untrusted, got.Action, got.Reason, want)
					}
					if got.Reason == "" {
						t.Errorf("%s %s %s: no reason", mode, r, w)
					}
				}
			}
		}
	}
}

func TestFailClosed(t *testing.T) {
	if d := Categories("everything", tf.None, false, Driver); d.Action != Deny {
		t.Errorf("unknown read category: %v", d)
	}
	if d := Categories(tf.Project, "somewhere", false, Driver); d.Action != Deny {
		t.Errorf("unknown write category: %v", d)
	}
	if d := Categories(tf.Project, tf.None, false, "pilot"); d.Action != Deny {
		t.Errorf("unknown mode: %v", d)
	}
	if _, err := ParseMode("pilot"); err == nil {
		t.Error("ParseMode accepted pilot")
	}
}

func TestUntrustedNeverAllowed(t *testing.T) {
	for _, mode := range []Mode{Navigator, Driver} {
		if d := Categories(tf.None, tf.None, true, mode); d.Action != Ask {
			t.Errorf("%s: untrusted no-op tool is %s", mode, d.Action)
		}
	}
}
