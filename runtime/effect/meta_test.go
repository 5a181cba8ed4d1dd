package effect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

func TestParseMeta(t *testing.T) {
	tests := []struct {
		meta    string
		want    Meta
		details string // empty: no error
	}{
		{`null`, Meta{}, ""},
		{`{}`, Meta{}, ""},
		{`{"idempotency_key":"01J","stage":true,"progressToken":7}`, Meta{IdempotencyKey: "01J", HasKey: true, Stage: true}, ""},
		{`{"stage":false}`, Meta{}, ""},
		{`{"idempotency_key":""}`, Meta{}, `{"code":"effect/invalid_meta","field":"_meta.idempotency_key"}`},
		{`{"idempotency_key":5}`, Meta{}, `{"code":"effect/invalid_meta","field":"_meta.idempotency_key"}`},
		{`{"idempotency_key":null}`, Meta{}, `{"code":"effect/invalid_meta","field":"_meta.idempotency_key"}`},
		{`{"stage":"yes"}`, Meta{}, `{"code":"effect/invalid_meta","field":"_meta.stage"}`},
		{`{"stage":1}`, Meta{}, `{"code":"effect/invalid_meta","field":"_meta.stage"}`},
	}
	for _, tc := range tests {
		m, _ := decode(t, tc.meta).(map[string]any)
		got, err := ParseMeta(m)
		got2, err2 := ParseMetaJSON(json.RawMessage(tc.meta))
		if tc.details == "" {
			if err != nil || err2 != nil || got != tc.want || got2 != tc.want {
				t.Errorf("%s: got %+v %v / %+v %v", tc.meta, got, err, got2, err2)
			}
			continue
		}
		for _, e := range []*envelope.Error{err, err2} {
			if e == nil || e.Code != envelope.ValidationError || string(e.Details) != tc.details {
				t.Errorf("%s: got %v", tc.meta, e)
			}
		}
	}
	if _, err := ParseMetaJSON(json.RawMessage(`[1]`)); err == nil || err.Code != envelope.ValidationError {
		t.Errorf("array meta: %v", err)
	}
	if m, err := ParseMetaJSON(nil); err != nil || m != (Meta{}) {
		t.Errorf("empty meta: %+v %v", m, err)
	}
}

func TestKeyConflictAndPlacement(t *testing.T) {
	ops := loadOps(t)
	op := *ops["github.comments.create"]
	op.Input.Safety = air.Safety{IdempotencyKey: "idempotency_key", DryRun: air.DryRunKey}
	carrier := &op
	none := ops["github.issues.create"] // no carrier

	if err := CheckKeyConflict(carrier, map[string]any{"idempotency_key": "other"}, "K"); err == nil ||
		err.Code != envelope.ValidationError || string(err.Details) != `{"code":"effect/idempotency_key_conflict","field":"idempotency_key"}` || err.Operation != op.ID {
		t.Errorf("conflict: %v", err)
	}
	renamed := op
	renamed.Input.Safety.IdempotencyKey = "anvil_idempotency_key"
	if err := CheckKeyConflict(&renamed, map[string]any{"anvil_idempotency_key": 5}, "K"); err == nil || string(err.Details) != `{"code":"effect/idempotency_key_conflict","field":"anvil_idempotency_key"}` {
		t.Errorf("renamed carrier: %v", err)
	}
	// A safety name without a declared carrier is ignored.
	noMech := op
	noMech.Idempotency = air.Idempotency{Mode: air.IdemNone, Mechanism: "none"}
	for _, ok := range []struct {
		op   *air.Operation
		args map[string]any
		key  string
	}{
		{carrier, map[string]any{"idempotency_key": "K"}, "K"},
		{carrier, map[string]any{"idempotency_key": nil}, "K"},
		{carrier, map[string]any{"owner": "o"}, "K"},
		{carrier, map[string]any{"idempotency_key": "other"}, ""},
		{carrier, nil, "K"},
		{none, map[string]any{"idempotency_key": "other"}, "K"},
		{&noMech, map[string]any{"idempotency_key": "other"}, "K"},
		{nil, map[string]any{"idempotency_key": "other"}, "K"},
	} {
		if err := CheckKeyConflict(ok.op, ok.args, ok.key); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}

	args, sent := PlaceKey(carrier, map[string]any{"owner": "o"}, "K")
	if sent != "K" || args["idempotency_key"] != "K" {
		t.Errorf("placed %v %q", args, sent)
	}
	args, sent = PlaceKey(carrier, nil, "K")
	if sent != "K" || args["idempotency_key"] != "K" {
		t.Errorf("nil args: %v %q", args, sent)
	}
	args, sent = PlaceKey(carrier, map[string]any{"idempotency_key": "sdk-key"}, "")
	if sent != "sdk-key" || args["idempotency_key"] != "sdk-key" {
		t.Errorf("argument key: %v %q", args, sent)
	}
	if _, sent = PlaceKey(carrier, map[string]any{"idempotency_key": ""}, ""); sent != "" {
		t.Errorf("empty argument key sent %q", sent)
	}
	args, sent = PlaceKey(none, map[string]any{"owner": "o"}, "K")
	if sent != "" || len(args) != 1 {
		t.Errorf("no carrier: %v %q", args, sent)
	}
}

// TestKeyLengthCapped is the regression test for finding 10 (the key half)
// of issue 15: a 200 KB ledger id was accepted and written to the audit
// line. A key over MaxIdempotencyKeyBytes is now refused wherever it comes
// from: _meta (and so the REST Idempotency-Key header) or the carrier
// argument.
func TestKeyLengthCapped(t *testing.T) {
	long := strings.Repeat("k", 200_000)
	atCap := strings.Repeat("k", MaxIdempotencyKeyBytes)
	if m, err := ParseMeta(map[string]any{"idempotency_key": atCap}); err != nil || m.IdempotencyKey != atCap {
		t.Errorf("key at the cap: %v", err)
	}
	_, err := ParseMeta(map[string]any{"idempotency_key": long})
	if err == nil || err.Code != envelope.ValidationError || string(err.Details) != `{"code":"effect/idempotency_key_too_long","field":"_meta.idempotency_key"}` {
		t.Errorf("long _meta key: %v", err)
	}
	ops := loadOps(t)
	op := *ops["github.comments.create"]
	op.Input.Safety = air.Safety{IdempotencyKey: "idempotency_key", DryRun: air.DryRunKey}
	for _, key := range []string{"", "K"} {
		err := CheckKeyConflict(&op, map[string]any{"idempotency_key": long + "x"}, key)
		if err == nil || err.Operation != op.ID || string(err.Details) != `{"code":"effect/idempotency_key_too_long","field":"idempotency_key"}` {
			t.Errorf("long argument key (call key %q): %v", key, err)
		}
	}
	if err := CheckKeyConflict(&op, map[string]any{"idempotency_key": atCap}, atCap); err != nil {
		t.Errorf("argument key at the cap: %v", err)
	}
}

// TestKeyCharactersChecked: a NUL, another control character or invalid
// UTF-8 in a key is the caller's error (validation_error
// effect/invalid_idempotency_key, 400) wherever the key comes from, so no
// store sees a key it cannot hold (PostgreSQL refuses NUL and invalid UTF-8
// in text, which answered 503 retryable before).
func TestKeyCharactersChecked(t *testing.T) {
	ops := loadOps(t)
	op := *ops["github.comments.create"]
	op.Input.Safety = air.Safety{IdempotencyKey: "idempotency_key", DryRun: air.DryRunKey}
	for _, bad := range []string{"a\x00b", "\x00", "tab\there", "del\x7f", "bad\xffutf8", "cr\r", "\xc3"} {
		_, err := ParseMeta(map[string]any{"idempotency_key": bad})
		if err == nil || err.Code != envelope.ValidationError || envelope.RESTStatus(err.Code) != 400 ||
			string(err.Details) != `{"code":"effect/invalid_idempotency_key","field":"_meta.idempotency_key"}` {
			t.Errorf("_meta key %q: %v", bad, err)
		}
		err = CheckKeyConflict(&op, map[string]any{"idempotency_key": bad}, "")
		if err == nil || string(err.Details) != `{"code":"effect/invalid_idempotency_key","field":"idempotency_key"}` {
			t.Errorf("argument key %q: %v", bad, err)
		}
	}
	for _, good := range []string{"01J9Z8Y7X6W5V4T3S2R1Q0P9N8", "clé-é-ünïcode ✓", "with space"} {
		if _, err := ParseMeta(map[string]any{"idempotency_key": good}); err != nil {
			t.Errorf("key %q refused: %v", good, err)
		}
	}
}
