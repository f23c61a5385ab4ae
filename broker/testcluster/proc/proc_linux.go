//go:build linux

package proc

import "syscall"

// sysProcAttr puts each child in its own process group (so a terminal's
// signals aimed at the test binary do not reach it) and makes it die with the
// test binary (Pdeathsig), so a crashed run leaves no process behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
