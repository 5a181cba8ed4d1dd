package openapi

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZSlow(t *testing.T) {
	files, _ := filepath.Glob(os.Getenv("D") + "/*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.Split(string(b), "\n")
		name, _ := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
		rest := strings.Join(lines[2:], "\n")
		rest = strings.TrimSpace(rest)
		data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(rest, "[]byte("), ")"))
		if err != nil {
			t.Log(f, err)
			continue
		}
		t0 := time.Now()
		_, err = LoadBytes(name, []byte(data), nil)
		if d := time.Since(t0); d > 30*time.Millisecond {
			t.Logf("%s %v len=%d err=%v", filepath.Base(f), d, len(data), err)
		}
	}
}
