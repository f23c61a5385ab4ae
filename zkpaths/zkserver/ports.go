package zkserver

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Ports for servers started later, often in another process (ZooKeeper,
// broker processes), are handed out by FreePort. A port found free by
// binding port 0 comes from the kernel's ephemeral range, and before the
// server binds it any outgoing connection on the machine may take it as
// its source port: under a loaded parallel test run that happens. So
// FreePort picks ports below the ephemeral range, where the kernel never
// picks source ports, and holds a lock file per port for the rest of the
// process's life so that concurrent test processes never hand out the same
// one.

const (
	portFloor = 10000 // lowest port handed out
	portCeil  = 65535
)

var ports struct {
	mu    sync.Mutex
	held  map[int]*os.File // lock files, open until the process exits
	lo    int
	hi    int
	ready bool
}

// ephemeralRange reads the kernel's source-port range (Linux's default
// 32768-60999 when it cannot be read).
func ephemeralRange() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && lo <= hi {
				return lo, hi
			}
		}
	}
	return 32768, 60999
}

// FreePort returns a TCP port on 127.0.0.1 that is free now, lies outside
// the kernel's ephemeral range, and is handed out to no other caller in any
// process on this machine while this process lives.
func FreePort() (int, error) {
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if !ports.ready {
		elo, ehi := ephemeralRange()
		ports.lo, ports.hi = portFloor, elo-1
		if ports.hi-ports.lo < 1000 { // no room below: use the ports above
			ports.lo, ports.hi = ehi+1, portCeil
		}
		ports.held = map[int]*os.File{}
		ports.ready = true
	}
	n := ports.hi - ports.lo + 1
	if n < 1 {
		return 0, errors.New("zkserver: no ports outside the ephemeral range")
	}
	dir := filepath.Join(os.TempDir(), "klassik-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, err
	}
	start := rand.IntN(n)
	for i := 0; i < n; i++ {
		p := ports.lo + (start+i)%n
		if _, mine := ports.held[p]; mine {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return 0, err
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // another process holds it
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			f.Close() // in use by something that does not take our locks
			continue
		}
		l.Close()
		ports.held[p] = f
		return p, nil
	}
	return 0, errors.New("zkserver: every port outside the ephemeral range is taken")
}
