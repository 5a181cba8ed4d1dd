//go:build !unix

package e2e

import (
	"os"
	"os/exec"
)

// setGroup does nothing where process groups do not exist.
func setGroup(*exec.Cmd) {}

// termGroup asks the process to stop.
func termGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// killGroup kills the process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
