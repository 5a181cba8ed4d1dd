package handler

import (
	"encoding/json"
	"testing"
)

func TestExtraHelpers(t *testing.T) {
	var m map[string]any
	if v, ok := ExtraBool(m, "confirm"); v || ok {
		t.Error("a nil map has a confirm input")
	}
	if _, _, ok := ExtraString(m, "k"); ok {
		t.Error("a nil map has a carrier")
	}
	m = SetExtra(m, "confirm", "yes")
	if v, ok := ExtraBool(m, "confirm"); v || !ok {
		t.Errorf("a string confirm: %v %v, want false present", v, ok)
	}
	m = SetExtra(m, "confirm", true)
	m = SetExtra(m, "k", nil)
	if v, ok := ExtraBool(m, "confirm"); !v || !ok {
		t.Error("confirm true not read")
	}
	if _, _, ok := ExtraString(m, "k"); ok {
		t.Error("a null carrier is present")
	}
	m = SetExtra(m, "k", 7)
	if s, isString, ok := ExtraString(m, "k"); s != "" || isString || !ok {
		t.Errorf("a number carrier: %q %v %v", s, isString, ok)
	}
	m = SetExtra(m, "k", "abc")
	if s, isString, ok := ExtraString(m, "k"); s != "abc" || !isString || !ok {
		t.Errorf("a string carrier: %q %v %v", s, isString, ok)
	}
}

func TestAs(t *testing.T) {
	var n json.Number
	if As[json.Number]("12", &n) || n != "" {
		t.Error("a string passed as a json.Number")
	}
	if !As(any(json.Number("12")), &n) || n != "12" {
		t.Errorf("json.Number not taken: %q", n)
	}
	var s string
	if As(any(json.Number("12")), &s) || s != "" {
		t.Error("a json.Number passed as a string")
	}
	var b bool
	if !As(any(true), &b) || !b {
		t.Error("bool not taken")
	}
}
