package air

import "testing"

func TestEffectReadsResponse(t *testing.T) {
	at := func(p string) Mapping { return Mapping{{Name: "x", ArgSource: ArgSource{Path: p}}} }
	lit := Mapping{{Name: "x", ArgSource: ArgSource{Const: []byte(`1`)}}}
	for _, tt := range []struct {
		name string
		e    *Effect
		want bool
	}{
		{"nil", nil, false},
		{"plain read", &Effect{Kind: KindRead}, false},
		{"inverse from request", &Effect{Inverse: &FollowUp{Arguments: at("request.id")}}, false},
		{"inverse from key", &Effect{Inverse: &FollowUp{Arguments: at("idempotency_key")}}, false},
		{"inverse literal", &Effect{Inverse: &FollowUp{Arguments: lit}}, false},
		{"inverse from response", &Effect{Inverse: &FollowUp{Arguments: at("response.id")}}, true},
		{"optional response", &Effect{Inverse: &FollowUp{Arguments: at("response.items[0].id?")}}, true},
		{"compensation from response", &Effect{Compensate: &FollowUp{Arguments: at("response.number")}}, true},
		{"deadline at response", &Effect{Inverse: &FollowUp{Arguments: at("request.id"), Deadline: &Deadline{At: "response.expires_at"}}}, true},
		{"deadline within", &Effect{Inverse: &FollowUp{Arguments: at("request.id"), Deadline: &Deadline{WithinMs: new(int64)}}}, false},
		{"lookup from response", &Effect{Lookup: &Lookup{Arguments: at("response.id")}}, true},
		{"lookup by key", &Effect{Lookup: &Lookup{Arguments: at("idempotency_key")}}, false},
		{"draft", &Effect{Draft: &Draft{}}, true},
		{"unparsable path", &Effect{Inverse: &FollowUp{Arguments: at("resp")}}, true},
	} {
		if got := tt.e.ReadsResponse(); got != tt.want {
			t.Errorf("%s: ReadsResponse() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
