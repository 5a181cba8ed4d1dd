package effect

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestDeadlineWithin(t *testing.T) {
	now := time.UnixMilli(1700000000123)
	for _, c := range []struct {
		within int64
		want   *int64
	}{
		{0, ptr(int64(1700000000123))},
		{5000, ptr(int64(1700000005123))},
		{-1, nil},
		{math.MaxInt64 - 1700000000123, ptr(int64(math.MaxInt64))},
		{math.MaxInt64 - 1700000000122, nil},
	} {
		if got := DeadlineWithin(now, c.within); !sameMs(got, c.want) {
			t.Errorf("DeadlineWithin(%d) = %v, want %v", c.within, show(got), show(c.want))
		}
	}
	before := time.Now().UnixMilli()
	got := DeadlineWithin(time.Time{}, 10)
	if got == nil || *got < before+10 || *got > time.Now().UnixMilli()+10 {
		t.Errorf("DeadlineWithin(zero time, 10) = %v, want now+10", show(got))
	}
}

func TestEpochMs(t *testing.T) {
	for _, c := range []struct {
		in     any
		want   *int64
		goInts *int64 // epochMs, which also reads Go ints
	}{
		{1.7e12, ptr(int64(1.7e12)), ptr(int64(1.7e12))},
		{-2.9, ptr(int64(-2)), ptr(int64(-2))},
		{json.Number("1700000000000"), ptr(int64(1700000000000)), ptr(int64(1700000000000))},
		{json.Number("1700000000000.9"), ptr(int64(1700000000000)), ptr(int64(1700000000000))},
		{json.Number("x"), nil, nil},
		{"2024-01-02T03:04:05.5Z", ptr(int64(1704164645500)), ptr(int64(1704164645500))},
		{"2024-01-02", nil, nil},
		{math.Inf(1), nil, nil},
		{9.3e18, nil, nil},
		{true, nil, nil},
		{nil, nil, nil},
		{int(5), nil, ptr(int64(5))},
		{int64(7), nil, ptr(int64(7))},
	} {
		if got := EpochMs(c.in); !sameMs(got, c.want) {
			t.Errorf("EpochMs(%#v) = %v, want %v", c.in, show(got), show(c.want))
		}
		if got := epochMs(c.in); !sameMs(got, c.goInts) {
			t.Errorf("epochMs(%#v) = %v, want %v", c.in, show(got), show(c.goInts))
		}
	}
}

func sameMs(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
