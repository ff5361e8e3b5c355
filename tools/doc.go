// Package tools pins the developer tools that CI runs (buf, the protoc
// plugins, staticcheck) as Go tools of this separate module, so that they
// come from the Go module proxy at fixed versions and stay out of the main
// module's dependencies. Run them with `go tool -modfile=tools/go.mod NAME`.
package tools
