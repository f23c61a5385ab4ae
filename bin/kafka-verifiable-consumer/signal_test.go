package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

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

// With --enable-autocommit and no limit, a signal (the context run gets)
// ends the consumer with the revocation and shutdown_complete, and no
// offsets_committed line was printed (auto commits have no callback).
func TestVerifiableConsumerSignalAutocommit(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"}}, "vcs", 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pctx, pcancel := context.WithTimeout(context.Background(), time.Minute)
	defer pcancel()
	if err := c.Client().ProduceSync(pctx, &kgo.Record{Topic: "vcs", Value: []byte("a")}, &kgo.Record{Topic: "vcs", Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--broker-list", strings.Join(c.Bootstrap(), ","), "--topic", "vcs", "--group-id", "auto",
			"--enable-autocommit", "--assignment-strategy", "org.apache.kafka.clients.consumer.RoundRobinAssignor"}, &out, &errOut)
	}()
	if !testcluster.Poll(30*time.Second, func() bool { return strings.Contains(out.String(), `"name":"records_consumed"`) }) {
		t.Fatalf("nothing consumed:\n%s\n%s", out.String(), errOut.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after the signal")
	}
	s := out.String()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	n := len(lines)
	if n < 5 || !strings.Contains(lines[n-1], `"name":"shutdown_complete"}`) ||
		!strings.HasSuffix(lines[n-2], `"name":"partitions_revoked","partitions":[{"topic":"vcs","partition":0}]}`) ||
		strings.Contains(s, "offsets_committed") {
		t.Fatalf("output:\n%s", s)
	}
}
