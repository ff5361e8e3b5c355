package files

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/opair-dev/opair/sdk"
)

const (
	// maxBytesLength bounds the bytes one call reads.
	maxBytesLength = 1 << 20
	// maxHexBytes bounds the bytes shown as a hex dump (4 characters of
	// output per byte).
	maxHexBytes = 64 << 10
	// maxImage is the largest image returned as image content.
	maxImage = 5 << 20
)

type readBytesArgs struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

// imageType returns the MIME type of a PNG, JPEG, GIF or WebP image by its
// magic bytes, or "".
func imageType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}

func readFileBytes(e *env) (*sdk.Result, error) {
	var a readBytesArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	switch {
	case a.Offset < 0:
		return sdk.Errorf("offset must be 0 or more, not %d", a.Offset), nil
	case a.Length < 0:
		return sdk.Errorf("length must be 1 or more, not %d", a.Length), nil
	}
	r, res, err := e.resolveExisting(a.Path, wantFile)
	if r == nil {
		return res, err
	}
	name := displayRel(r)
	size := r.Info.Size()
	if a.Offset > size {
		return sdk.Errorf("offset %d is past the end of %s, which is %d bytes", a.Offset, name, size), nil
	}
	length := a.Length
	if length == 0 {
		length = size - a.Offset // absent: to the end, within the cap
	}
	f, err := e.open(r)
	if err != nil {
		return openErr(r, err)
	}
	defer f.Close()

	whole := a.Offset == 0 && length >= size
	if whole && size <= maxImage {
		head := make([]byte, 16)
		n, _ := io.ReadFull(f, head)
		if mime := imageType(head[:n]); mime != "" {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
			data, big, err := readAll(f, maxImage)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
			if !big {
				kind := strings.ToUpper(strings.TrimPrefix(mime, "image/"))
				return &sdk.Result{
					Content: []sdk.Content{
						{Text: fmt.Sprintf("%s: %s image, %d bytes", name, kind, len(data))},
						{Image: &sdk.Image{MIMEType: mime, Data: data}},
					},
					Summary: fmt.Sprintf("read %s image %s (%d bytes)", kind, name, len(data)),
					Details: map[string]any{"path": name, "class": r.Class.String(), "offset": 0, "length": len(data), "size": size, "encoding": "image", "mimeType": mime, "sha256": sha(data)},
				}, nil
			}
		}
	}

	n := min(length, maxBytesLength, size-a.Offset)
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, a.Offset)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	buf = buf[:got]
	end := a.Offset + int64(len(buf))
	var sb strings.Builder
	encoding := "text"
	if isText(buf) {
		fmt.Fprintf(&sb, "bytes %d-%d of %d in %s, as text:\n", a.Offset, end, size, name)
		sb.WriteString(string(buf))
		if len(buf) > 0 && buf[len(buf)-1] != '\n' {
			sb.WriteByte('\n')
		}
	} else {
		encoding = "hex"
		if len(buf) > maxHexBytes {
			buf = buf[:maxHexBytes]
			end = a.Offset + maxHexBytes
		}
		fmt.Fprintf(&sb, "bytes %d-%d of %d in %s, as a hex dump:\n", a.Offset, end, size, name)
		hexDump(&sb, buf, a.Offset)
	}
	if end < size && end < a.Offset+length {
		fmt.Fprintf(&sb, "(cut at %d bytes; read on with offset=%d)\n", end-a.Offset, end)
	} else if end < size {
		fmt.Fprintf(&sb, "(%d more bytes after offset %d)\n", size-end, end)
	} else {
		sb.WriteString("(end of file)\n")
	}
	if whole && a.Offset == 0 && imageType(buf) != "" && size > maxImage {
		fmt.Fprintf(&sb, "(this image is over %d bytes, too large to return as an image)\n", maxImage)
	}
	det := map[string]any{"path": name, "class": r.Class.String(), "offset": a.Offset, "length": end - a.Offset, "size": size, "encoding": encoding}
	if a.Offset == 0 && end == size {
		det["sha256"] = sha(buf)
	}
	return &sdk.Result{
		Content: []sdk.Content{{Text: sb.String()}},
		Summary: fmt.Sprintf("read %d bytes of %s", end-a.Offset, name),
		Details: det,
	}, nil
}

// isText reports whether b reads as text: valid UTF-8 (a character cut at
// either edge is allowed), no NUL, and no control characters other than
// tab, newline, carriage return and form feed.
func isText(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	// Skip continuation bytes of a character cut at the start.
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return !utf8.FullRune(b) // a character cut at the end
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' || r == 0x7f {
			return false
		}
		b = b[size:]
	}
	return true
}

// hexDump writes b like hexdump -C, with offsets counted from base.
func hexDump(sb *strings.Builder, b []byte, base int64) {
	for i := 0; i < len(b); i += 16 {
		row := b[i:min(i+16, len(b))]
		fmt.Fprintf(sb, "%08x  ", base+int64(i))
		for j := 0; j < 16; j++ {
			if j < len(row) {
				fmt.Fprintf(sb, "%02x ", row[j])
			} else {
				sb.WriteString("   ")
			}
			if j == 7 {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(" |")
		for _, c := range row {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			sb.WriteByte(c)
		}
		sb.WriteString("|\n")
	}
}
