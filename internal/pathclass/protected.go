package pathclass

import (
	"strings"
	"unicode"
)

// protectedNames are the path components no builtin may write, whatever its
// scope (SPEC §7.5): anything named so, or anything below a directory named
// so. Keys are in foldName form.
var protectedNames = map[string]string{}

func init() {
	for reason, names := range map[string][]string{
		"git's own data (its config and hooks run code)":            {".git"},
		"Opair's own configuration":                                 {".opair"},
		"git configuration":                                         {".gitmodules", ".gitconfig"},
		"package-manager configuration":                             {".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"},
		"a file that runs code when a directory is entered":         {".envrc", ".mise.toml"},
		"editor configuration (it can run tasks and approve tools)": {".vscode", ".idea"},
		"git hooks": {".husky"},
		"a shell start-up file": {
			".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
			".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout",
			".kshrc", ".cshrc", ".tcshrc", ".login",
		},
		"ssh configuration and keys": {".ssh"},
	} {
		for _, n := range names {
			protectedNames[foldName(n)] = reason
		}
	}
}

// protectedPairs are two consecutive components that are protected together
// (the user's git and Opair configuration under ~/.config).
var protectedPairs = [][2]string{
	{".config", "git"},
	{".config", "opair"},
}

// ProtectedName returns why no builtin may write a path with this component
// (or a path below it), or "" if the name is not protected. Matching ignores
// case, Unicode characters that file systems such as HFS+ ignore, and the
// trailing dots and spaces that NTFS drops; "GIT~1" counts as ".git".
func ProtectedName(component string) string {
	f := foldName(component)
	if r, ok := protectedNames[f]; ok {
		return component + " is " + r
	}
	if f == foldName("git~1") {
		return component + " may be the short name of .git"
	}
	return ""
}

// protectedComponents checks every component of a slash-separated path and
// returns the first reason found.
func protectedComponents(p string) string {
	comps := strings.Split(p, "/")
	for i, c := range comps {
		if c == "" || c == "." || c == ".." {
			continue
		}
		if r := ProtectedName(c); r != "" {
			return r
		}
		if i+1 < len(comps) {
			for _, pair := range protectedPairs {
				if foldName(c) == foldName(pair[0]) && foldName(comps[i+1]) == foldName(pair[1]) {
					return c + "/" + comps[i+1] + " holds the user's " + pair[1] + " configuration"
				}
			}
		}
	}
	return ""
}

// foldName canonicalises a file name for protection checks: ignorable code
// points removed, trailing dots and spaces dropped, each rune replaced by
// the smallest rune of its case-folding orbit.
func foldName(s string) string {
	s = strings.Map(func(r rune) rune {
		if isIgnorable(r) {
			return -1
		}
		return r
	}, s)
	if s != "." && s != ".." {
		s = strings.TrimRight(s, ". ")
		if s == "" {
			return ""
		}
	}
	var b strings.Builder
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}

// isIgnorable lists the code points HFS+ ignores in names (the set git
// checks in is_hfs_dotgit) plus other default-ignorable format characters.
func isIgnorable(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160,
		r == 0x17B4, r == 0x17B5, r == 0x3164, r == 0xFEFF, r == 0xFFA0:
		return true
	case r >= 0x180B && r <= 0x180F,
		r >= 0x200B && r <= 0x200F,
		r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F,
		r >= 0xFE00 && r <= 0xFE0F,
		r >= 0xFFF0 && r <= 0xFFF8,
		r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
}
