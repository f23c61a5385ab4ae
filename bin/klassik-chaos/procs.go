package main

// Local processes: finding the process listening on a port (a broker's or
// a ZooKeeper node's), remembering how it was started, signalling it, and
// starting it again after a kill.
//
// How a process is restarted, in order:
//  1. --broker-cmd 'ID=COMMAND' (--zk-cmd 'N=COMMAND' for ZooKeeper node N,
//     numbered by its place in --zookeeper): COMMAND runs under /bin/sh -c
//     in the tool's working directory;
//  2. otherwise what /proc/<pid> said before the kill: the command line
//     (/proc/<pid>/cmdline), working directory (/proc/<pid>/cwd) and
//     environment (/proc/<pid>/environ) of the process that listened on
//     the port, run again as they were.
//
// A restarted process gets a session of its own (it survives the tool) and
// its output goes to <--log-dir>/<name>.out.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// listeningInodes maps the socket inode of every TCP socket in LISTEN
// state on port to true (IPv4 and IPv6).
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 10 || fields[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
				out[fields[9]] = true
			}
		}
	}
	return out
}

// PidListening returns the process listening on TCP port, or 0.
func PidListening(port int) int {
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return 0
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", d.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", d.Name(), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return pid
			}
		}
	}
	return 0
}

// restartDeathSignal is sent to a restarted process when the tool ends; 0
// (the tool's default) lets it outlive the tool, the tests set SIGKILL.
var restartDeathSignal syscall.Signal

// Launch is how to start a process again.
type Launch struct {
	Shell string   // a --broker-cmd / --zk-cmd command, or
	Argv  []string // the command line read from /proc
	Dir   string
	Env   []string
}

func (l Launch) String() string {
	if l.Shell != "" {
		return "sh -c " + strconv.Quote(l.Shell)
	}
	return fmt.Sprintf("%s (in %s)", strings.Join(l.Argv, " "), l.Dir)
}

// LaunchOf reads how process pid was started from /proc.
func LaunchOf(pid int) (Launch, error) {
	base := filepath.Join("/proc", strconv.Itoa(pid))
	cmdline, err := os.ReadFile(filepath.Join(base, "cmdline"))
	if err != nil {
		return Launch{}, err
	}
	argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(argv) == 0 || argv[0] == "" {
		return Launch{}, fmt.Errorf("process %d: empty command line", pid)
	}
	dir, err := os.Readlink(filepath.Join(base, "cwd"))
	if err != nil {
		return Launch{}, err
	}
	environ, err := os.ReadFile(filepath.Join(base, "environ"))
	if err != nil {
		return Launch{}, err
	}
	var env []string
	for _, e := range strings.Split(string(environ), "\x00") {
		if e != "" {
			env = append(env, e)
		}
	}
	if !strings.Contains(argv[0], "/") {
		// Started through PATH: run the same executable.
		if exe, err := os.Readlink(filepath.Join(base, "exe")); err == nil {
			argv[0] = exe
		}
	} else if !filepath.IsAbs(argv[0]) {
		argv[0] = filepath.Join(dir, argv[0])
	}
	return Launch{Argv: argv, Dir: dir, Env: env}, nil
}

// Start starts the process in a session of its own, its output appended to
// logFile; exited is closed when it ends.
func (l Launch) Start(logFile string) (pid int, exited <-chan struct{}, err error) {
	var cmd *exec.Cmd
	if l.Shell != "" {
		cmd = exec.Command("/bin/sh", "-c", l.Shell)
	} else {
		cmd = exec.Command(l.Argv[0], l.Argv[1:]...)
		cmd.Dir = l.Dir
		cmd.Env = l.Env
	}
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer out.Close()
	fmt.Fprintf(out, "=== klassik-chaos: starting %s at %s\n", l, time.Now().Format(time.RFC3339Nano))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: restartDeathSignal}
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	return cmd.Process.Pid, done, nil
}

// parseCmds parses repeated 'ID=COMMAND' flags.
func parseCmds(list []string) (map[int32]string, error) {
	out := map[int32]string{}
	for _, s := range list {
		id, cmd, ok := strings.Cut(s, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 32)
		if !ok || err != nil || strings.TrimSpace(cmd) == "" {
			return nil, fmt.Errorf("%q: want ID=COMMAND", s)
		}
		out[int32(n)] = cmd
	}
	return out, nil
}

// portOf returns the port of "host:port".
func portOf(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(p)
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadBytes('\n')
	if i := bytes.LastIndexByte(line, ')'); i >= 0 && i+2 < len(line) {
		return line[i+2] != 'Z'
	}
	return true
}
