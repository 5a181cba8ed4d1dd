package pgtest

import (
	"errors"
	"strings"
	"testing"
)

func TestStartStop(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Skip(err)
	}
	defer s.Close()
	dsn, err := s.NewSchema()
	if err != nil {
		t.Fatal(err)
	}
	if err := Exec(dsn, "CREATE TABLE x (a int)"); err != nil {
		t.Fatal(err)
	}
}

// Without a server the reason is one line that says what to do.
func TestNoPostgresIsOneLine(t *testing.T) {
	t.Setenv(EnvDSN, "")
	old := binGlob
	binGlob = "/nonexistent/postgresql/*/bin/initdb"
	defer func() { binGlob = old }()
	_, err := Start()
	if !errors.Is(err, ErrNoPostgres) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "ci-postgres.sh") {
		t.Fatalf("err = %v", err)
	}
}

func TestWithSearchPath(t *testing.T) {
	got, err := WithSearchPath("postgres://u@127.0.0.1:5/db?sslmode=disable", "s1")
	if err != nil || got != "postgres://u@127.0.0.1:5/db?search_path=s1&sslmode=disable" {
		t.Fatalf("%s %v", got, err)
	}
	if _, err := WithSearchPath("host=x", "s"); err == nil {
		t.Fatal("key=value DSN accepted")
	}
}
