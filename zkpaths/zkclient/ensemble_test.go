package zkclient_test

import (
	"testing"
	"time"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// With a three-node ensemble and a multi-host connect string the client
// survives the loss of the leader: the session (and so the broker
// registration) outlives the re-election when the session timeout exceeds it.
func TestEnsembleLeaderLoss(t *testing.T) {
	e, err := zkserver.StartEnsemble(3, zkserver.Options{})
	if err != nil {
		t.Fatalf("ensemble: %v", err)
	}
	defer e.Stop()
	c, err := zkclient.Connect(e.ConnectString("/kafka"), 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustNoErr(t, c.EnsureTopLevelPaths())
	epoch, err := c.RegisterBroker(brokerInfo(1))
	mustNoErr(t, err)
	sid := c.SessionID()

	var leader *zkserver.Server
	for _, s := range e.Servers {
		if m, _ := zkserver.Mode(s.Addr(), time.Second); m == "leader" {
			leader = s
		}
	}
	if leader == nil {
		t.Fatal("no leader")
	}
	mustNoErr(t, leader.Kill())
	// Requests are retried until a new leader serves them.
	_, err = c.Create("/after-leader-loss", nil, zkclient.Persistent)
	mustNoErr(t, err)
	info, ok, err := c.GetBroker(1)
	if err != nil || !ok || info.Epoch != epoch {
		t.Fatalf("registration after leader loss: %+v %v %v", info, ok, err)
	}
	if c.SessionID() != sid {
		t.Fatalf("session replaced: 0x%x -> 0x%x", sid, c.SessionID())
	}
	if _, _, err := c.Get(zkpaths.BrokerIDsPath); err != nil {
		t.Fatal(err)
	}
}
