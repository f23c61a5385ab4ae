package broker_test

import (
	"testing"
	"time"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// A broker cut off from ZooKeeper longer than its session timeout loses its
// registration (its RF=1 partition goes offline); when it reconnects it
// gets a new session, re-registers with a new broker epoch (a new czxid),
// and the controller brings its partition back with it as leader.
func TestSessionExpiryReregistersWithNewEpoch(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks, ZKProxy: true, SessionTimeout: 2 * time.Second})
	ctrl, _ := c.Controller()
	victim := (c.Index(ctrl) + 1) % c.N()
	id := c.BrokerID(victim)
	b := c.Broker(victim)
	req := map[int32][]int32{0: {id}}
	// An explicit assignment puts the only replica on the victim.
	if err := c.ZK().CreateTopic("lonely", zkpaths.TopicAssignment{Partitions: req}, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(30*time.Second, "the partition online on the victim", func() bool {
		s, ok := c.PartitionState("lonely", 0)
		return ok && s.Leader == id
	})
	epoch0 := b.BrokerEpoch()

	c.PauseZK(victim)
	c.WaitFor(30*time.Second, "the victim's registration to expire", func() bool {
		_, ok, err := c.ZK().GetBroker(id)
		return err == nil && !ok
	})
	c.WaitFor(30*time.Second, "the partition offline", func() bool {
		s, _ := c.PartitionState("lonely", 0)
		return s.Leader == zkpaths.NoLeader
	})
	c.ResumeZK(victim)
	c.WaitFor(20*time.Second, "a new registration with a new broker epoch", func() bool {
		info, ok, err := c.ZK().GetBroker(id)
		return err == nil && ok && info.Epoch > epoch0 && b.BrokerEpoch() == info.Epoch
	})
	c.WaitFor(30*time.Second, "the partition back online on the victim", func() bool {
		s, _ := c.PartitionState("lonely", 0)
		return s.Leader == id
	})
	produceAndCheck(t, c, "lonely", 200)
}

// The controller's session expiring moves the controllership: another
// broker wins with /controller_epoch + 1; once reconnected, the old
// controller learns of the expiry, resigns and re-registers as an ordinary
// broker.
func TestControllerSessionExpiryMovesControllership(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks, ZKProxy: true, SessionTimeout: 2 * time.Second})
	ctrl, _ := c.Controller()
	epoch := c.ControllerEpoch()
	old := c.Index(ctrl)
	c.PauseZK(old)
	c.WaitFor(30*time.Second, "another controller", func() bool {
		id, ok := c.Controller()
		return ok && id != ctrl
	})
	if e := c.ControllerEpoch(); e != epoch+1 {
		t.Fatalf("/controller_epoch %d, want %d", e, epoch+1)
	}
	// A partitioned client learns that its session expired only when it
	// reaches the server again; then it resigns and re-registers.
	c.ResumeZK(old)
	c.WaitFor(20*time.Second, "the old controller to resign and register again", func() bool {
		_, ok, err := c.ZK().GetBroker(ctrl)
		return err == nil && ok && !c.Broker(old).Controller().IsActive()
	})
	if id, _ := c.Controller(); id == ctrl || c.Broker(old).Controller().IsActive() {
		t.Fatalf("controller %d after the old one came back", id)
	}
	if e := c.ControllerEpoch(); e != epoch+1 {
		t.Fatalf("/controller_epoch %d after the reconnect, want %d", e, epoch+1)
	}
}
