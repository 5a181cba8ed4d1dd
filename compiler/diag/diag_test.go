package diag

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestSortAndPrint(t *testing.T) {
	var l List
	l.Errorf(Pos{File: "b.yaml", Line: 2, Col: 1}, "effect/x", "second file")
	l.Warnf(Pos{File: "a.yaml", Line: 10, Col: 3}, "w/code", "later line")
	l.Infof(Pos{File: "a.yaml", Line: 2, Col: 7}, "i/code", "early line")
	l.Sort()
	var buf bytes.Buffer
	l.WriteText(&buf)
	want := "a.yaml:2:7: info i/code: early line\na.yaml:10:3: warning w/code: later line\nb.yaml:2:1: error effect/x: second file\n"
	if buf.String() != want {
		t.Errorf("got\n%s", buf.String())
	}
	if !l.HasErrors() || l.Count(Warning) != 1 {
		t.Error("counts")
	}
	buf.Reset()
	List(nil).WriteJSON(&buf)
	if strings.TrimSpace(buf.String()) != "[]" {
		t.Errorf("empty JSON %q", buf.String())
	}
	if (Pos{}).String() != "-" || (Pos{File: "f"}).String() != "f" || (Pos{File: "f", Line: 3}).String() != "f:3" {
		t.Error("Pos.String")
	}
	f := Fail(Pos{File: "x", Line: 1, Col: 1}, "spec/empty", "nothing in %s", "x")
	if f.Error() != "x:1:1: error spec/empty: nothing in x" {
		t.Errorf("Failure: %s", f.Error())
	}
}

func TestErrors(t *testing.T) {
	var l List
	l.Warnf(Pos{File: "a"}, "x/w", "warn")
	l.Errorf(Pos{File: "b"}, "x/e1", "one")
	l.Infof(Pos{}, "x/i", "info")
	l.Errorf(Pos{File: "a"}, "x/e2", "two")
	got := l.Errors()
	if len(got) != 2 || got[0].Code != "x/e1" || got[1].Code != "x/e2" {
		t.Errorf("Errors() = %v", got)
	}
	if (List{}).Errors() != nil {
		t.Error("no errors: want nil")
	}
}

// TestListJSON: `anvil compile --format json` reports positions as an
// object, whatever AIR records; nil stays null and empty [].
func TestListJSON(t *testing.T) {
	l := List{{Pos: Pos{File: "a.yaml", Line: 2, Col: 3}, Level: Error, Code: "x/e", Message: "m", OperationID: "s.o"}, {Level: Info, Code: "x/i", Message: "n"}}
	b, err := json.Marshal(l)
	want := `[{"pos":{"file":"a.yaml","line":2,"column":3},"level":"error","code":"x/e","message":"m","operationId":"s.o"},{"pos":{},"level":"info","code":"x/i","message":"n"}]`
	if err != nil || string(b) != want {
		t.Fatalf("%s (%v), want %s", b, err, want)
	}
	var back List
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 2 || back[0] != l[0] || back[1] != l[1] {
		t.Errorf("read back %+v (%v)", back, err)
	}
	if b, _ := json.Marshal(struct{ A, B List }{nil, List{}}); string(b) != `{"A":null,"B":[]}` {
		t.Errorf("nil and empty lists: %s", b)
	}
}
