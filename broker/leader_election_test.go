package broker_test

// Leader election rules with in-process brokers on a real ZooKeeper:
// unclean.leader.election.enable per topic and as the broker default, and
// the automatic preferred election with leader.imbalance.per.broker.percentage.
// createAssigned and otherTwo are shared by the controller-side tests of
// this package (controlled_shutdown_test.go, reassignment_test.go).

import (
	"reflect"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
)

// createAssigned creates topic with an explicit replica assignment (one
// slice per partition) and topic configs, through CreateTopics as
// kafka-topics.sh --replica-assignment does, and waits for every partition
// to have a leader and a full ISR.
func createAssigned(t *testing.T, c *testcluster.Cluster, topic string, assignment [][]int32, configs map[string]string) {
	t.Helper()
	resp, err := assignedTopicRequest(topic, 30000, assignment, configs).RequestWith(ctxT(t, 30*time.Second), c.Client())
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	for p, rs := range assignment {
		c.WaitFor(20*time.Second, topic+" leader and full ISR", func() bool {
			s, ok := c.PartitionState(topic, int32(p))
			return ok && s.Leader >= 0 && len(s.ISR) == len(rs)
		})
	}
}

// strandOutOfSync makes y the only live replica of partition 0 of every
// topic (assigned to x and y) while out of sync: y is killed and x left
// alone as leader and ISR, then x is killed and every partition goes
// offline, then y is started again.
func strandOutOfSync(c *testcluster.Cluster, topics []string, xi, yi int) {
	x := c.BrokerID(xi)
	c.KillBroker(yi)
	c.WaitFor(20*time.Second, "ISR [x] everywhere", func() bool {
		for _, tp := range topics {
			if s, ok := c.PartitionState(tp, 0); !ok || !reflect.DeepEqual(s.ISR, []int32{x}) || s.Leader != x {
				return false
			}
		}
		return true
	})
	c.KillBroker(xi)
	c.WaitFor(20*time.Second, "every partition offline", func() bool {
		for _, tp := range topics {
			if s, ok := c.PartitionState(tp, 0); !ok || s.Leader != -1 {
				return false
			}
		}
		return true
	})
	c.RestartBroker(yi)
}

// otherTwo returns the indexes of the two brokers that are not the
// controller, so a test can stop them without a controller failover.
func otherTwo(c *testcluster.Cluster) (int, int) {
	ctrl, _ := c.Controller()
	ci := c.Index(ctrl)
	return (ci + 1) % 3, (ci + 2) % 3
}

// TestUncleanLeaderElection: election rules: with the ISR's only member dead, a clean
// election leaves the partition offline (Leader: none) even when another
// replica comes back; unclean.leader.election.enable=true on the topic
// elects that out-of-sync replica (counted in UncleanLeaderElectionsPerSec,
// logged as possible data loss), and turning the override on later (an
// AlterConfigs) triggers the same election for a partition already offline.
func TestUncleanLeaderElection(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	xi, yi := otherTwo(c)
	x, y := c.BrokerID(xi), c.BrokerID(yi)
	ctrl, _ := c.Controller()
	as := [][]int32{{x, y}}
	createAssigned(t, c, "clean", as, nil)
	createAssigned(t, c, "unclean", as, map[string]string{"unclean.leader.election.enable": "true"})
	createAssigned(t, c, "later", as, nil)
	strandOutOfSync(c, []string{"clean", "unclean", "later"}, xi, yi)
	c.WaitFor(20*time.Second, "unclean-0 led by the out-of-sync replica", func() bool {
		s, ok := c.PartitionState("unclean", 0)
		return ok && s.Leader == y && reflect.DeepEqual(s.ISR, []int32{y})
	})
	// The same OnlinePartition transition on broker startup handled every
	// offline partition, so the clean ones are decided already.
	for _, tp := range []string{"clean", "later"} {
		if s, _ := c.PartitionState(tp, 0); s.Leader != -1 {
			t.Errorf("%s-0 with unclean election disabled: %s, want Leader: none", tp, s)
		}
	}
	uncleanCount := func() int64 {
		m, ok := c.Broker(c.Index(ctrl)).Metrics().Get("kafka.controller.ControllerStats.UncleanLeaderElectionsPerSec").(gometrics.Meter)
		if !ok {
			t.Fatal("no UncleanLeaderElectionsPerSec meter on the controller")
		}
		return m.Count()
	}
	// The controller marks the meter once the election's state write
	// returned, which is after the state can be read in ZooKeeper.
	c.WaitFor(20*time.Second, "UncleanLeaderElectionsPerSec to count the election", func() bool { return uncleanCount() >= 1 })
	if n := uncleanCount(); n != 1 {
		t.Errorf("UncleanLeaderElectionsPerSec count %d, want 1", n)
	}

	res, err := c.Admin().AlterTopicConfigs(ctxT(t, 20*time.Second), []kadm.AlterConfig{{Name: "unclean.leader.election.enable", Value: kmsg.StringPtr("true")}}, "later")
	if err != nil || res[0].Err != nil {
		t.Fatalf("alter configs: %v %+v", err, res)
	}
	c.WaitFor(20*time.Second, "later-0 elected uncleanly after the override", func() bool {
		s, ok := c.PartitionState("later", 0)
		return ok && s.Leader == y
	})
	c.WaitFor(20*time.Second, "UncleanLeaderElectionsPerSec to count the second election", func() bool { return uncleanCount() >= 2 })
	if n := uncleanCount(); n != 2 {
		t.Errorf("UncleanLeaderElectionsPerSec count %d, want 2", n)
	}
	if s, _ := c.PartitionState("clean", 0); s.Leader != -1 {
		t.Errorf("clean-0 after the other topic's override: %s, want Leader: none", s)
	}
	// The clean topic's ISR member returns: a clean election.
	c.RestartBroker(xi)
	c.WaitFor(20*time.Second, "clean-0 led by its ISR member", func() bool {
		s, ok := c.PartitionState("clean", 0)
		return ok && s.Leader == x
	})
}

// TestAutoRebalanceThreshold: auto.leader.rebalance.enable with
// leader.imbalance.per.broker.percentage: the imbalance is the share of a
// broker's preferred partitions it does not lead. At 25% (threshold 50%)
// nothing moves through several checks; deleting the balanced partitions
// makes it 100% and the controller elects the preferred leader again.
func TestAutoRebalanceThreshold(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "1",
		"leader.imbalance.per.broker.percentage":  "50",
	}})
	xi, yi := otherTwo(c)
	x, y := c.BrokerID(xi), c.BrokerID(yi)
	createAssigned(t, c, "pair", [][]int32{{x, y}}, nil)
	createAssigned(t, c, "solo", [][]int32{{x}, {x}, {x}}, nil)
	c.StopBroker(xi)
	if s, _ := c.PartitionState("pair", 0); s.Leader != y {
		t.Fatalf("pair-0 after x's controlled shutdown: %s", s)
	}
	c.RestartBroker(xi)
	c.WaitFor(30*time.Second, "x back in pair-0's ISR and leading solo", func() bool {
		s, ok := c.PartitionState("pair", 0)
		if !ok || len(s.ISR) != 2 {
			return false
		}
		for p := int32(0); p < 3; p++ {
			if so, ok := c.PartitionState("solo", p); !ok || so.Leader != x {
				return false
			}
		}
		return true
	})
	// Four imbalance checks, counted on the controller's
	// AutoLeaderBalance timer rather than assumed from the clock: 1 of x's
	// 4 preferred partitions is led elsewhere, so none of them may move it.
	// Summed over every broker, so a controller move does not matter.
	checks := func() int64 {
		var n int64
		for i := 0; i < c.N(); i++ {
			if tm, ok := c.Broker(i).Metrics().Get("kafka.controller.ControllerStats.AutoLeaderBalanceRateAndTimeMs").(gometrics.Timer); ok {
				n += tm.Count()
			}
		}
		return n
	}
	start := checks()
	c.WaitFor(60*time.Second, "four more imbalance checks by the controller", func() bool {
		if s, _ := c.PartitionState("pair", 0); s.Leader != y {
			t.Fatalf("pair-0 moved to %d with a 25%% imbalance under a 50%% threshold", s.Leader)
		}
		return checks() >= start+4
	})
	// The last check may have finished its ZooKeeper write after the poll
	// read the state; read it once more.
	if s, _ := c.PartitionState("pair", 0); s.Leader != y {
		t.Fatalf("pair-0 moved to %d with a 25%% imbalance under a 50%% threshold", s.Leader)
	}
	dres, err := c.Admin().DeleteTopics(ctxT(t, 20*time.Second), "solo")
	if err != nil || dres["solo"].Err != nil {
		t.Fatalf("delete solo: %v %+v", err, dres)
	}
	c.WaitFor(20*time.Second, "pair-0 back on its preferred replica", func() bool {
		s, ok := c.PartitionState("pair", 0)
		return ok && s.Leader == x
	})
}

// TestUncleanLeaderElectionBrokerDefault: election rules, broker level: with
// unclean.leader.election.enable=true in server.properties a topic without
// an override elects an out-of-sync replica, while a topic that sets it to
// false stays offline (the topic's value beats the broker's).
func TestUncleanLeaderElectionBrokerDefault(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{"unclean.leader.election.enable": "true"}})
	xi, yi := otherTwo(c)
	x, y := c.BrokerID(xi), c.BrokerID(yi)
	as := [][]int32{{x, y}}
	createAssigned(t, c, "inherits", as, nil)
	createAssigned(t, c, "refuses", as, map[string]string{"unclean.leader.election.enable": "false"})
	strandOutOfSync(c, []string{"inherits", "refuses"}, xi, yi)
	c.WaitFor(20*time.Second, "inherits-0 elected uncleanly", func() bool {
		s, ok := c.PartitionState("inherits", 0)
		return ok && s.Leader == y
	})
	if s, _ := c.PartitionState("refuses", 0); s.Leader != -1 {
		t.Errorf("refuses-0 with the topic override false: %s, want Leader: none", s)
	}
}
