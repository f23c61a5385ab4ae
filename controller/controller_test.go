package controller

import (
	"errors"
	"testing"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
)

// Not the controller → STALE_CONTROLLER_EPOCH; stale
// broker epoch → STALE_BROKER_EPOCH; unknown broker → BROKER_NOT_AVAILABLE.
func TestControlledShutdownErrors(t *testing.T) {
	h := newHarness(t)
	if _, err := h.exec("broker-up", []string{"1", "2"}); err != nil {
		t.Fatal(err)
	}
	h.exec("start", []string{"1", "2"})
	active, standby := h.ctrls[1], h.ctrls[2]
	if !active.IsActive() || standby.IsActive() {
		t.Fatal("controller 1 should be the active one")
	}
	if _, err := standby.processControlledShutdown(1, -1); !errors.Is(err, kerr.StaleControllerEpoch) {
		t.Fatalf("standby: %v", err)
	}
	epoch, _ := active.ctx.BrokerEpoch(2)
	if _, err := active.processControlledShutdown(2, epoch-1); !errors.Is(err, kerr.StaleBrokerEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	if _, err := active.processControlledShutdown(7, -1); !errors.Is(err, kerr.BrokerNotAvailable) {
		t.Fatalf("unknown broker: %v", err)
	}
	if rem, err := active.processControlledShutdown(2, epoch); err != nil || len(rem) != 0 {
		t.Fatalf("current epoch: %v %v", rem, err)
	}
	if !active.ctx.IsShuttingDown(2) || active.ctx.IsLive(2) {
		t.Fatal("broker 2 should be shutting down and no longer live")
	}
	// Through the event queue, preempted by shutdown: controller moved.
	q := make(chan result[[]common.TopicPartition], 1)
	standby.em.put(controlledShutdownEvent{id: 1, brokerEpoch: -1, reply: q})
	standby.em.close()
	if r := <-q; !errors.Is(r.err, kerr.StaleControllerEpoch) {
		t.Fatalf("preempted: %v", r.err)
	}
}

// A fenced write failing its /controller_epoch check makes the controller
// resign, and the metrics follow.
func TestFencedWriteResignsAndMetrics(t *testing.T) {
	h := newHarness(t)
	reg := gometrics.NewRegistry()
	h.cfg = func(c *Config) { c.Metrics = reg }
	h.exec("broker-up", []string{"1"})
	h.exec("start", []string{"1"})
	c := h.ctrls[1]
	gauge := func(name string) int64 {
		return reg.Get("kafka.controller.KafkaController." + name).(gometrics.Gauge).Value()
	}
	if !c.IsActive() || gauge("ActiveControllerCount") != 1 {
		t.Fatalf("active=%v count=%d", c.IsActive(), gauge("ActiveControllerCount"))
	}
	if _, err := h.exec("create-topic", []string{"t", "0:1", "1:2"}); err != nil {
		t.Fatal(err)
	}
	if gauge("GlobalTopicCount") != 1 || gauge("GlobalPartitionCount") != 2 || gauge("OfflinePartitionsCount") != 0 {
		t.Fatalf("topics %d partitions %d offline %d", gauge("GlobalTopicCount"), gauge("GlobalPartitionCount"), gauge("OfflinePartitionsCount"))
	}
	// Another controller bumps the epoch behind our back.
	if err := h.set(zkpaths.ControllerEpochPath, []byte("5")); err != nil {
		t.Fatal(err)
	}
	out, err := h.exec("create-topic", []string{"u", "0:1"})
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Fatalf("a fenced controller wrote or sent:\n%s", out)
	}
	if c.IsActive() || c.Epoch() != 0 || gauge("ActiveControllerCount") != 0 {
		t.Fatal("controller did not resign after a fenced write")
	}
	if c.ActiveControllerID() != 1 {
		// /controller still names us (nobody deleted it): we only know
		// that our epoch is stale.
		t.Fatalf("active controller id %d", c.ActiveControllerID())
	}
}

// Changed endpoints are cached and announced to every broker.
func TestBrokerModification(t *testing.T) {
	h := newHarness(t)
	h.exec("broker-up", []string{"1", "2"})
	h.exec("start", []string{"1"})
	c := h.ctrls[1]
	info := zkpaths.BrokerInfo{ID: 2, Version: 5, JMXPort: -1, Endpoints: []zkpaths.EndPoint{{ListenerName: "PLAINTEXT", Host: "10.0.0.2", Port: 9092, SecurityProtocol: "PLAINTEXT"}}}
	if err := h.set(zkpaths.BrokerIDPath(2), info.Encode()); err != nil {
		t.Fatal(err)
	}
	h.drain()
	b, _ := c.ctx.LiveOrShuttingDownBroker(2)
	if len(b.Endpoints) != 1 || b.Endpoints[0].Host != "10.0.0.2" {
		t.Fatalf("endpoints %+v", b.Endpoints)
	}
	if out := h.output(); out == "" {
		t.Fatal("no UpdateMetadata after an endpoint change")
	}
}
