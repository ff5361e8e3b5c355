//go:build !unix

package pathclass

import "io/fs"

// oNoFollow is not available here; Open's identity check still applies.
const oNoFollow = 0

// linkCount is not known here; assume one link.
func linkCount(fs.FileInfo) uint64 { return 1 }
