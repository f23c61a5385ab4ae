package e2e_test

// Go consumer-group members (franz-go, sarama, kafka-go) run as child
// processes so the suite can kill them with SIGKILL: the test binary
// re-executes itself with KLASSIK_GROUP_MEMBER set, and
// TestGroupMemberProcess becomes the member, speaking the line protocol
// described in groups_driver_test.go. Without the variable it does nothing.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const memberEnv = "KLASSIK_GROUP_MEMBER"

// goMember is the child's configuration: the spec plus which library.
type goMember struct {
	Lib string `json:"lib"`
	memberSpec
}

// goMemberClient is a groupClient whose members are this test binary.
func goMemberClient(name, lib string, describe bool) groupClient {
	return groupClient{name: name, describeAssignments: describe, command: func(t *testing.T, s memberSpec) *exec.Cmd {
		exe, err := os.Executable()
		if err != nil {
			t.Fatalf("test binary path: %v", err)
		}
		b, _ := json.Marshal(goMember{Lib: lib, memberSpec: s})
		cmd := exec.Command(exe, "-test.run=^TestGroupMemberProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), memberEnv+"="+string(b))
		return cmd
	}}
}

// TestGroupMemberProcess is the entry point of a Go member child process.
func TestGroupMemberProcess(t *testing.T) {
	cfg := os.Getenv(memberEnv)
	if cfg == "" {
		return // not a child: nothing to do
	}
	var m goMember
	if err := json.Unmarshal([]byte(cfg), &m); err != nil {
		fmt.Fprintln(os.Stderr, "bad member config:", err)
		os.Exit(3)
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() { // stdin EOF asks for a clean stop; the process ends with the member
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	out := &memberOut{w: bufio.NewWriterSize(os.Stdout, 1<<16)}
	var err error
	switch m.Lib {
	case "franz-go":
		err = runKgoMember(ctx, m.memberSpec, out)
	case "sarama":
		err = runSaramaMember(ctx, m.memberSpec, out)
	case "kafka-go":
		err = runKafkaGoMember(ctx, m.memberSpec, out)
	default:
		err = fmt.Errorf("unknown member library %q", m.Lib)
	}
	out.flush()
	if err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		os.Exit(1)
	}
	// Exit here so the testing package prints nothing on stdout.
	os.Exit(0)
}

// memberOut writes the line protocol; lines are flushed before any commit
// that covers them.
type memberOut struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (o *memberOut) printf(format string, args ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.w, format+"\n", args...)
	o.mu.Unlock()
}

func (o *memberOut) flush() {
	o.mu.Lock()
	_ = o.w.Flush()
	o.mu.Unlock()
}

func (o *memberOut) assign(ps []int32) {
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	if len(ps) == 0 {
		o.printf("ASSIGN -")
	} else {
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(int(p))
		}
		o.printf("ASSIGN %s", strings.Join(s, ","))
	}
	o.flush()
}
