package faulttest_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/faulttest"
)

// "running out of descriptors or maps is an error for the partition that
// needed one (KAFKA_STORAGE_ERROR to the client, the log directory
// offline only if Kafka would take it offline), never a broker that stops
// accepting connections: keep a reserve for the listener, the controller
// channel and ZooKeeper" (issue 13), and "out of file descriptors ... for
// one more connection or partition is an error for that request or
// partition, never a wedged listener" (issue 14).
//
// One kafka-server process with RLIMIT_NOFILE 256 (its storage may keep
// 168 segments open: 256 less 64 reserved and 24 for index writes). A
// topic of 220 partitions is created: every partition either takes
// records or answers KAFKA_STORAGE_ERROR, some do each, and the log
// directory stays online. The broker keeps serving: new connections, the
// partitions it has. A flood of 400 connections, past the limit, is
// answered by accepting and closing what does not fit; once it ends the
// listener works again. After the topic is deleted, a new one is created
// and every partition of it takes records.
func TestOutOfDescriptorsFailsPartitionsNotBroker(t *testing.T) {
	start := time.Now()
	c := faulttest.Start(t, faulttest.Options{Brokers: 1, NoFileLimit: 256, Overrides: map[string]string{
		"min.insync.replicas":              "1",
		"offsets.topic.replication.factor": "1",
		"log.segment.delete.delay.ms":      "200",
	}})
	addr := c.Node(0).Addr()
	produce := func(topic string, p int32) int16 {
		code, _, err := faulttest.ProduceDirect(addr, topic, p, []byte("v"), 10*time.Second)
		if err != nil {
			return -100 // no answer (counted as not settled)
		}
		return code
	}
	mustProduce := func(what, topic string, p int32) {
		t.Helper()
		c.WaitFor(20*time.Second, what, func() bool { return produce(topic, p) == 0 })
	}
	c.CreateTopic("base", map[int32][]int32{0: {1}}, nil)
	mustProduce("a first record in base-0", "base", 0)

	const many = 220
	assign := map[int32][]int32{}
	for p := int32(0); p < many; p++ {
		assign[p] = []int32{1}
	}
	c.CreateTopic("many", assign, nil)
	var ok, failed []int32
	c.WaitFor(60*time.Second, "every partition of many to take a record or answer KAFKA_STORAGE_ERROR", func() bool {
		ok, failed = ok[:0], failed[:0]
		for p := int32(0); p < many; p++ {
			switch produce("many", p) {
			case 0:
				ok = append(ok, p)
			case kerr.KafkaStorageError.Code:
				failed = append(failed, p)
			default:
				return false
			}
		}
		return true
	})
	t.Logf("out of 220 partitions with RLIMIT_NOFILE 256: %d take records, %d answer KAFKA_STORAGE_ERROR", len(ok), len(failed))
	if len(failed) == 0 || len(ok) < 100 {
		t.Fatalf("%d partitions took records and %d failed; want some of each and at least 100 working", len(ok), len(failed))
	}
	// Still serving: a new connection, the old partitions.
	mustProduce("base-0 after the descriptors ran out", "base", 0)
	mustProduce("a working partition of many", "many", ok[len(ok)-1])

	// A flood past the limit.
	var flood []net.Conn
	for i := 0; i < 400; i++ {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			break // the backlog is full: that is the flood's point
		}
		flood = append(flood, nc)
	}
	c.WaitFor(20*time.Second, "the broker to log that it closed connections it had no descriptor for", func() bool {
		data, _ := os.ReadFile(c.Node(0).Output)
		return strings.Contains(string(data), "out of file descriptors: closing a new connection")
	})
	for _, nc := range flood {
		nc.Close()
	}
	t.Logf("flood of %d connections held; the listener rejected what did not fit", len(flood))
	mustProduce("base-0 after the connection flood", "base", 0)

	// Deleting the topic frees its descriptors; a new topic works.
	adm := c.Admin()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.DeleteTopics(ctx, "many"); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(30*time.Second, "topic many to be deleted", func() bool {
		td, err := adm.ListTopics(ctx)
		return err == nil && !td.Has("many")
	})
	again := map[int32][]int32{}
	for p := int32(0); p < 40; p++ {
		again[p] = []int32{1}
	}
	c.CreateTopic("again", again, nil)
	c.WaitFor(30*time.Second, "every partition of a topic created after the deletion to take records", func() bool {
		for p := int32(0); p < 40; p++ {
			if produce("again", p) != 0 {
				return false
			}
		}
		return true
	})
	out, _ := os.ReadFile(c.Node(0).Output)
	if strings.Contains(string(out), "log directory failed") {
		t.Fatalf("the log directory went offline for want of descriptors:\n%s", c.DumpState())
	}
	if !strings.Contains(string(out), "out of file descriptors for log segments") {
		t.Fatalf("the broker never logged running out of segment descriptors")
	}
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}
