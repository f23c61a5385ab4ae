package zkserver

import "syscall"

// sysProcAttr makes the JVM die with the test binary (Pdeathsig), so a
// crashed test run leaves no ZooKeeper behind, and puts it in its own
// process group so terminal signals aimed at the tests do not reach it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
