package openapi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLargeInputsStayFast feeds shapes that a quadratic loader would choke
// on: many references into one large object, many parameters, many schema
// names that sanitize to the same base.
func TestLargeInputsStayFast(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"big","version":"1"},"paths":{"/a":{"get":{"parameters":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		// every parameter refers to the last component parameter, plus distinct ones
		if i%2 == 0 {
			b.WriteString(`{"$ref":"#/components/parameters/p` + fmt.Sprint(n-1) + `"}`)
		} else {
			fmt.Fprintf(&b, `{"name":"q%d","in":"query","schema":{"$ref":"#/components/schemas/s%%21%d"}}`, i, i)
		}
	}
	b.WriteString(`],"responses":{"200":{"description":"ok"}}}}},"components":{"parameters":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"name":"p%d","in":"query"}`, i, i)
	}
	b.WriteString(`},"schemas":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		// "s!<i>" all sanitize to s_<i>; and "x!", "x?", ... collide on "x"
		fmt.Fprintf(&b, `"s!%d":{"type":"string"},"x%s":{"type":"integer"}`, i, strings.Repeat("!", i%50+1)+fmt.Sprint(i/50))
	}
	b.WriteString(`}}}`)
	start := time.Now()
	s, err := LoadBytes("big.json", []byte(b.String()), nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Operations[0].Params); got != n/2+1 {
		t.Errorf("%d params", got)
	}
	if len(s.Schemas) != n/2 {
		t.Errorf("%d schemas", len(s.Schemas))
	}
	checkRefs(t, s)
	t.Logf("%d bytes in %v", b.Len(), took)
}
