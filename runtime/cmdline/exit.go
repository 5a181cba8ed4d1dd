package cmdline

import (
	"errors"
	"fmt"
	"io"
)

// Error is how a command of an Anvil command line fails when it chooses its
// exit code: the process prints "anvil: <msg>" on stderr, unless msg is
// empty (the command has already said what it had to), and exits with
// code. It is deliberately not a cli.ExitCoder, so urfave never exits the
// process on its own: Code decides, and returns.
type Error struct {
	code int
	msg  string
}

// Error is the message, or "exit <code>" for a silent exit.
func (e *Error) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.msg
}

// Code is the process exit code.
func (e *Error) Code() int { return e.code }

// Fail returns an error that makes Code print "anvil: <msg>" and return code.
func Fail(code int, format string, args ...any) error {
	return &Error{code: code, msg: fmt.Sprintf(format, args...)}
}

// Silent returns an error that makes Code return code and print nothing.
func Silent(code int) error { return &Error{code: code} }

// Code is the exit code of a command that returned err, after printing its
// message on stderr: 0 for nil; an *Error (wrapped or not) as it says; any
// other error "anvil: <err>" and 1.
func Code(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		if e.msg != "" {
			fmt.Fprintf(stderr, "anvil: %s\n", e.msg)
		}
		return e.code
	}
	fmt.Fprintf(stderr, "anvil: %s\n", err)
	return 1
}
