package files

import (
	"bytes"
	"strings"
	"testing"
)

// A 1×1 PNG.
var png1x1 = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"

func TestReadFileBytes(t *testing.T) {
	root := newProject(t, tree{
		"img.png":  png1x1,
		"a.gif":    "GIF89a" + strings.Repeat("\x00", 20),
		"a.jpg":    "\xff\xd8\xff\xe0" + strings.Repeat("\x01", 20),
		"a.webp":   "RIFF\x10\x00\x00\x00WEBPVP8 " + strings.Repeat("\x02", 8),
		"text.txt": "hello world\n",
		"bin":      "\x00\x01\x02\x03hello\xff",
		"big":      strings.Repeat("ab", 1<<20),
	})
	for _, tc := range []struct{ path, mime string }{{"img.png", "image/png"}, {"a.gif", "image/gif"}, {"a.jpg", "image/jpeg"}, {"a.webp", "image/webp"}} {
		_, res := mustOK(t, root, "readFileBytes", "project", map[string]any{"path": tc.path, "offset": 0, "length": 1 << 20})
		if len(res.Content) != 2 || res.Content[1].Image == nil || res.Content[1].Image.MIMEType != tc.mime {
			t.Fatalf("%s: not an image result: %+v", tc.path, res.Content)
		}
		if tc.path == "img.png" && !bytes.Equal(res.Content[1].Image.Data, []byte(png1x1)) {
			t.Error("image data differs")
		}
	}
	// Part of an image is bytes, not an image.
	got, res := mustOK(t, root, "readFileBytes", "project", map[string]any{"path": "img.png", "offset": 0, "length": 8})
	if res.Content[0].Image != nil || !strings.Contains(got, "00000000  89 50 4e 47 0d 0a 1a 0a") || !strings.Contains(got, "|.PNG....|") {
		t.Errorf("partial image:\n%s", got)
	}
	got, _ = mustOK(t, root, "readFileBytes", "project", map[string]any{"path": "text.txt", "offset": 6, "length": 5})
	if !strings.Contains(got, "as text:\nworld\n") || !strings.Contains(got, "bytes 6-11 of 12") {
		t.Errorf("text:\n%s", got)
	}
	got, _ = mustOK(t, root, "readFileBytes", "project", map[string]any{"path": "bin", "offset": 2, "length": 100})
	if !strings.Contains(got, "00000002  02 03 68 65") || !strings.Contains(got, "end of file") {
		t.Errorf("hex:\n%s", got)
	}
	// Capped at 1 MiB.
	_, res = mustOK(t, root, "readFileBytes", "project", map[string]any{"path": "big", "offset": 0, "length": 3 << 20})
	if d := details(t, res); d["length"] != float64(1<<20) {
		t.Errorf("cap: %v", d["length"])
	}
	if !strings.Contains(text(res), "read on with offset=1048576") {
		t.Errorf("no continuation hint: %.200s", text(res)[len(text(res))-200:])
	}
	mustRefuse(t, root, "readFileBytes", "project", map[string]any{"path": "text.txt", "offset": 100, "length": 1}, "past the end")
	mustRefuse(t, root, "readFileBytes", "project", map[string]any{"path": "text.txt", "offset": -1, "length": 1}, "0 or more")
}
