package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Spec describes one child process.
type Spec struct {
	Path   string   // the executable
	Args   []string // its arguments (without the program name)
	Env    []string // added to the test binary's environment
	Output string   // file that stdout and stderr are appended to
	Banner string   // if set, a line written to Output before the start
}

// Process is one running child. Its waiter goroutine owns cmd.Wait and
// closes done when the process has exited; Kill ends the process, so the
// goroutine always ends once the owner kills what is left in cleanup.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}

	// Valid once done is closed.
	err      error
	exitCode int
}

// Start starts the process described by s.
func Start(s Spec) (*Process, error) {
	out, err := os.OpenFile(s.Output, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child holds its own descriptor
	if s.Banner != "" {
		fmt.Fprintf(out, "=== %s at %s\n", s.Banner, time.Now().Format(time.RFC3339Nano))
	}
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	return StartCmd(cmd, nil)
}

// StartCmd starts a command the caller prepared (its pipes, environment),
// with the harness's process attributes. If drain is set, the waiter runs it
// before cmd.Wait: it must read the command's stdout pipe to EOF (Wait may
// not be called while a pipe is still being read).
func StartCmd(cmd *exec.Cmd, drain func()) (*Process, error) {
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", strings.Join(cmd.Args, " "), err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() { // waiter: owns cmd.Wait; ends when the process exits
		if drain != nil {
			drain()
		}
		err := cmd.Wait()
		p.err, p.exitCode = err, exitCode(err)
		close(p.done)
	}()
	return p, nil
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Running reports whether the process has not exited (a stopped process is
// running).
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Signal sends sig to the process.
func (p *Process) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Wait waits up to timeout for the process to exit and reports whether it
// did.
func (p *Process) Wait(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Kill sends SIGKILL (to this process only) and waits for it to exit.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Err is cmd.Wait's result; valid once Done is closed.
func (p *Process) Err() error { return p.err }

// ExitCode is the exit status (-1 for a signal or a wait error); valid once
// Done is closed.
func (p *Process) ExitCode() int { return p.exitCode }

// Run runs a tool to completion within timeout and returns its combined
// output and exit code. err is set only when the tool could not be run or
// missed the deadline, not for a non-zero exit.
func Run(timeout time.Duration, env []string, path string, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), -1, fmt.Errorf("%s %s: no exit within %v", filepath.Base(path), strings.Join(args, " "), timeout)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode(), nil
	case err != nil:
		return out.String(), -1, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return out.String(), 0, nil
}

// Build compiles the packages (import paths) into dir with the go tool of
// the running toolchain.
func Build(dir string, pkgs ...string) error {
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)
	cmd := exec.Command("go", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// RepoRoot is the top of the repository (the folder holding bin/), found
// from this file's path.
func RepoRoot() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if _, err := os.Stat(filepath.Join(dir, "bin", "kafka-server-start.sh")); err != nil {
		return "", fmt.Errorf("bin/kafka-server-start.sh not found under %s: %w", dir, err)
	}
	return dir, nil
}

// Tail returns the last lines of a file ("(error)" if it cannot be read).
func Tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return TailString(string(data), lines)
}

// TailString returns the last lines of s.
func TailString(s string, lines int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}
