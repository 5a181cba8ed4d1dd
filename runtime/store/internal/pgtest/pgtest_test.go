package pgtest

import "testing"

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
