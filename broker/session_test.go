package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
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

// An AlterConfigs whose ZooKeeper requests wait through an outage that
// expires the broker's session is run again on the new session: the client
// gets no error and the config is stored (a request is never resent on a
// new session by itself, so without that the answer would be
// UNKNOWN_SERVER_ERROR).
func TestAlterConfigsAcrossSessionExpiry(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Racks: racks, ZKProxy: true, SessionTimeout: 2 * time.Second})
	c.CreateTopic("altered", 1, 2, nil)
	ctrl, _ := c.Controller()
	victim := (c.Index(ctrl) + 1) % c.N()
	id := c.BrokerID(victim)
	arrived := make(chan struct{})
	var once sync.Once
	c.Intercept(victim, kmsg.AlterConfigs.Int16(), func(context.Context, *network.Request) (kmsg.Response, bool, error) {
		once.Do(func() { close(arrived) })
		return nil, false, nil
	})
	cl := c.Client(kgo.SeedBrokers(c.Addr(victim)), kgo.RequestTimeoutOverhead(2*time.Minute))
	c.PauseZK(victim)
	req := kmsg.NewPtrAlterConfigsRequest()
	res := kmsg.NewAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "altered"
	cfg := kmsg.NewAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "retention.ms", kmsg.StringPtr("3600007")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	type answer struct {
		resp *kmsg.AlterConfigsResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := req.RequestWith(context.Background(), cl.SeedBrokers()[0])
		done <- answer{resp, err}
	}()
	select {
	case <-arrived:
	case a := <-done:
		t.Fatalf("AlterConfigs answered while the broker was cut off from ZooKeeper: %+v %v", a.resp, a.err)
	case <-time.After(time.Minute):
		t.Fatal("AlterConfigs never reached the broker")
	}
	c.WaitFor(60*time.Second, "the victim's registration to expire", func() bool {
		_, ok, err := c.ZK().GetBroker(id)
		return err == nil && !ok
	})
	c.ResumeZK(victim)
	var a answer
	select {
	case a = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("AlterConfigs never answered after ZooKeeper came back")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	if len(a.resp.Resources) != 1 {
		t.Fatalf("%d resources in the answer", len(a.resp.Resources))
	}
	if r := a.resp.Resources[0]; r.ErrorCode != 0 {
		t.Fatalf("AlterConfigs across the session expiry: %v %v", kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	got, err := c.ZK().GetEntityConfigs(zkpaths.ConfigTypeTopic, "altered")
	if err != nil {
		t.Fatal(err)
	}
	if got["retention.ms"] != "3600007" {
		t.Fatalf("/config/topics/altered %v, want retention.ms=3600007", got)
	}
}
