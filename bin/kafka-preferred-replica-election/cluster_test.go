package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// TestAgainstCluster runs both modes against real brokers: the controller
// must consume the ZooKeeper request (delete the znode), and the bootstrap
// mode must either elect or, while the brokers lack ElectLeaders, fail
// with the Java client's UnsupportedVersionException.
func TestAgainstCluster(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 3}, "pref", 2, 2)

	var out, errOut strings.Builder
	if code := run([]string{"--zookeeper", c.ZKConnect()}, &out, &errOut, 10*time.Second); code != 0 ||
		!strings.Contains(out.String(), "Successfully started preferred replica election for partitions Set(pref-0, pref-1)\n") {
		t.Fatalf("zookeeper mode: %d %q %q", code, out.String(), errOut.String())
	}
	c.WaitFor(20*time.Second, "the controller to consume "+zkpaths.PreferredReplicaElectionPath, func() bool {
		ok, _, err := c.ZK().Exists(zkpaths.PreferredReplicaElectionPath)
		return err == nil && !ok
	})

	supported := clitest.Supports(t, c, 43)
	out.Reset()
	errOut.Reset()
	code := run([]string{"--bootstrap-server", strings.Join(c.Bootstrap(), ","), "--path-to-json-file", clitest.WriteFile(t, `{"partitions":[{"topic":"pref","partition":0}]}`)}, &out, &errOut, 10*time.Second)
	if !supported {
		want := "Exception in thread \"main\" java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not support ELECT_LEADERS\n"
		if code != 1 || out.String() != deprecation+"\n" || errOut.String() != want {
			t.Fatalf("unsupported: %d %q %q", code, out.String(), errOut.String())
		}
		return
	}
	if code != 0 || out.String() != deprecation+"\nPreferred replica already elected for partitions pref-0\n" {
		t.Fatalf("bootstrap mode: %d %q %q", code, out.String(), errOut.String())
	}
}
