package specdiff

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diff"
)

const v30 = `openapi: 3.0.3
info: {title: T, version: "1"}
servers: [{url: https://api.example}]
paths:
  /things:
    get:
      operationId: listThings
      responses:
        "200": {description: ok}
        "404": {description: none}
`

func side(name, text string) Side { return Side{Name: name, Bytes: []byte(text)} }

func TestCompare(t *testing.T) {
	same, err := Compare(side("a.yaml", v30), side("b.yaml", v30))
	if err != nil || len(same) != 0 {
		t.Errorf("identical descriptions: %v %v", same, err)
	}
	changed := strings.Replace(strings.Replace(v30, `        "404": {description: none}`+"\n", "", 1), "https://api.example", "https://api2.example", 1)
	got, err := Compare(side("a.yaml", v30), side("b.yaml", changed))
	if err != nil {
		t.Fatal(err)
	}
	var op, servers *diff.Change
	for i := range got {
		switch {
		case got[i].Method == "GET" && got[i].Path == "/things":
			op = &got[i]
		case strings.HasPrefix(got[i].Detail, "servers:"):
			servers = &got[i]
		}
	}
	if op == nil || op.Kind != diff.SpecChanged || !op.Breaking || op.OldLocation == "" || !strings.HasPrefix(op.OldLocation, "a.yaml:") {
		t.Errorf("a removed 404: %+v", op)
	}
	if servers == nil || servers.Method != "" || servers.Path != "" {
		t.Errorf("a changed server: %+v (all: %+v)", servers, got)
	}
	swagger := "swagger: \"2.0\"\ninfo: {title: T, version: \"1\"}\npaths: {}\n"
	if _, err := Compare(side("a.yaml", v30), side("b.yaml", swagger)); err == nil {
		t.Error("OpenAPI 3 against Swagger 2 compared")
	}
	if _, err := Compare(side("a.yaml", v30), side("b.yaml", "{")); err == nil {
		t.Error("a broken description compared")
	}
}
