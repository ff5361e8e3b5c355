package childenv

import "testing"

func TestForbidden(t *testing.T) {
	bad := []string{"PATH", "LD_PRELOAD", "ld_library_path", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "BASH_ENV", "ENV",
		"GIT_CONFIG_PARAMETERS", "GIT_DIR", "GOFLAGS", "TAR_OPTIONS", "RIPGREP_CONFIG_PATH", "npm_config_script_shell",
		"OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_PROFILE", "DB_PASSWORD", "MY_SECRET", "1BAD", "A-B", "", "OPAIR_TOOLS_DIR"}
	for _, name := range bad {
		if Forbidden(name) == "" {
			t.Errorf("%q allowed", name)
		}
	}
	for _, name := range []string{"LANG", "LC_ALL", "CGO_ENABLED", "GOOS", "RUST_BACKTRACE", "NO_COLOR", "CI"} {
		if why := Forbidden(name); why != "" {
			t.Errorf("%q forbidden: %s", name, why)
		}
	}
}
