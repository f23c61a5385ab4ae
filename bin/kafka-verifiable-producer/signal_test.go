package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

// syncBuffer is a bytes.Buffer the test reads while the tool writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A signal (the context run gets ends on SIGINT/SIGTERM) stops an
// unlimited, throttled producer: what was sent is flushed, then
// shutdown_complete and tool_data close the output, as Kafka's shutdown
// hook does.
func TestVerifiableProducerSignal(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "vps", 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--bootstrap-server", strings.Join(c.Bootstrap(), ","), "--topic", "vps", "--throughput", "50"}, &out, &errOut)
	}()
	if !testcluster.Poll(30*time.Second, func() bool { return strings.Count(out.String(), "producer_send_success") >= 3 }) {
		t.Fatalf("no acknowledged sends:\n%s\n%s", out.String(), errOut.String())
	}
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after the signal")
	}
	lines := events(t, out.String())
	n := len(lines)
	if code != 0 || n < 5 || lines[n-2] != `{"timestamp":T,"name":"shutdown_complete"}` || !strings.Contains(lines[n-1], `"name":"tool_data"`) ||
		!strings.Contains(lines[n-1], `"target_throughput":50,`) {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	sent := strings.Count(out.String(), "producer_send_success")
	if !strings.Contains(lines[n-1], `"acked":`+itoa(sent)+`,`) {
		t.Errorf("tool_data %s, but %d successes printed", lines[n-1], sent)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
