package childenv

// GitArgs returns the options the host puts right after a git subcommand,
// whatever the tool file says, so that a repository's configuration cannot
// run a program through a read-only command: no external diff driver and no
// textconv filter. The host shows them in the command line the human
// approves; they are part of what runs.
func GitArgs(subcommand string) []string {
	switch subcommand {
	case "diff", "log", "show", "whatchanged", "format-patch", "range-diff":
		return []string{"--no-ext-diff", "--no-textconv"}
	case "blame", "grep":
		return []string{"--no-textconv"}
	}
	return nil
}
