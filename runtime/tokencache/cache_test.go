package tokencache

import (
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	short := strings.Repeat("a", MaxKeyedToken)
	if Key(short) != short {
		t.Error("a short token is not its own key")
	}
	long := strings.Repeat("a", MaxKeyedToken+1)
	k := Key(long)
	if len(k) != 33 || k[0] != 0 || k == Key(long[:MaxKeyedToken]+"b") {
		t.Errorf("a long token's key: %q", k)
	}
}

// TestBounded: a full cache drops expired entries first, then an eighth,
// and never holds more than its max.
func TestBounded(t *testing.T) {
	c := New(16, func(exp float64, now float64) bool { return now >= exp })
	for i := 0; i < 16; i++ {
		exp := 100.0
		if i%2 == 0 {
			exp = 10
		}
		c.Put(string(rune('a'+i)), exp, 0)
	}
	if c.Len() != 16 {
		t.Fatalf("len %d", c.Len())
	}
	c.Put("a", 10, 50) // a key already held replaces its entry
	if c.Len() != 16 {
		t.Fatalf("replacing: len %d", c.Len())
	}
	c.Put("new", 100, 50) // the eight expired go
	if c.Len() != 9 {
		t.Fatalf("after the expired sweep: len %d", c.Len())
	}
	if _, ok := c.Get("b"); !ok {
		t.Error("an unexpired entry went")
	}
	if _, ok := c.Get("c"); ok {
		t.Error("an expired entry stayed")
	}
	for i := 0; i < 100; i++ {
		c.Put(strings.Repeat("x", i+1), 100, 50)
		if c.Len() > 16 {
			t.Fatalf("len %d over max", c.Len())
		}
	}
	c.Remove("b")
	if _, ok := c.Get("b"); ok {
		t.Error("removed entry still there")
	}
}
