package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version or VCS revision from the build info is used.
var version = ""

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "" {
		v = bi.Main.Version
		if v == "" || v == "(devel)" {
			v = "devel"
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v += " " + s.Value[:12]
				}
				if s.Key == "vcs.modified" && s.Value == "true" {
					v += " (modified)"
				}
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	return fmt.Sprintf("opair %s %s/%s %s", v, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of opair",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return nil
		},
	}
}
