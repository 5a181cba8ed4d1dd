package air

import (
	"encoding/json"
	"testing"
)

// TestDiagnosticWire: AIR records a diagnostic's position as one path
// string, as it always has, and reads it back to the same bytes.
func TestDiagnosticWire(t *testing.T) {
	for _, c := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{Pos: Pos{File: "spec.yaml", Line: 12, Col: 5}, Level: LevelError, Code: "x/y", Message: "a <b> & c", OperationID: "svc.op"},
			`{"level":"error","code":"x/y","message":"a \u003cb\u003e \u0026 c","operationId":"svc.op","path":"spec.yaml:12:5"}`},
		{Diagnostic{Pos: Pos{File: "dir/a.json", Line: 3}, Level: LevelWarning, Code: "w", Message: "m", CapabilityID: "cap"},
			`{"level":"warning","code":"w","message":"m","capabilityId":"cap","path":"dir/a.json:3"}`},
		{Diagnostic{Pos: Pos{File: "a.yaml"}, Level: LevelInfo, Code: "i", Message: "m"}, `{"level":"info","code":"i","message":"m","path":"a.yaml"}`},
		{Diagnostic{Pos: Pos{Line: 4}, Level: LevelInfo, Code: "i", Message: "m"}, `{"level":"info","code":"i","message":"m"}`},
		{Diagnostic{Pos: Pos{File: "c:9:x.yaml", Line: 2, Col: 1}, Level: LevelError, Code: "e", Message: "m"}, `{"level":"error","code":"e","message":"m","path":"c:9:x.yaml:2:1"}`},
		{Diagnostic{Pos: Pos{File: "v:007"}, Level: LevelError, Code: "e", Message: "m"}, `{"level":"error","code":"e","message":"m","path":"v:007"}`},
	} {
		b, err := json.Marshal(c.d)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.d, b, err, c.want)
			continue
		}
		var back Diagnostic
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(back)
		if string(again) != c.want {
			t.Errorf("%s reads back as %+v, written %s", c.want, back, again)
		}
	}
	var d Diagnostic
	if err := json.Unmarshal([]byte(`{"level":"error","code":"e","message":"m","path":"api.yaml:40:7"}`), &d); err != nil ||
		d.Pos != (Pos{File: "api.yaml", Line: 40, Col: 7}) {
		t.Errorf("structured position %+v (%v)", d.Pos, err)
	}
}
