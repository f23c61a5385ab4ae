package e2e_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/zkpaths/zkserver"
)

// TestKcatAndZkCliSeeTheCluster: what an operator sees with the usual tools.
// `kcat -L` lists the three brokers and the topic's partitions with leaders,
// and `zkCli get /controller` names one of the registered brokers, in Kafka's
// JSON.
func TestKcatAndZkCliSeeTheCluster(t *testing.T) {
	kcat := requireTool(t, "kcat", "apt-get install -y kcat")
	c := startCluster(t)
	createTopic(t, c, "inspect")

	out := string(run(t, 30*time.Second, nil, kcat, "-b", c.Bootstrap()[0], "-L"))
	if !strings.Contains(out, " 3 brokers:") {
		t.Fatalf("kcat -L does not list 3 brokers:\n%s", out)
	}
	for i := 0; i < c.N(); i++ {
		if want := "broker " + itoa(c.BrokerID(i)) + " at " + c.Addr(i); !strings.Contains(out, want) {
			t.Errorf("kcat -L lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, `topic "inspect" with 6 partitions:`) {
		t.Fatalf("kcat -L does not show topic inspect with 6 partitions:\n%s", out)
	}
	if n := len(regexp.MustCompile(`partition \d+, leader \d+, replicas: \d+,\d+,\d+, isrs: \d+,\d+,\d+`).FindAllString(out, -1)); n != 6 {
		t.Fatalf("kcat -L shows %d partitions with a leader and 3 replicas, want 6:\n%s", n, out)
	}

	addr, chroot, _ := strings.Cut(c.ZKConnect(), "/")
	got, err := zkserver.ZkCli(addr, 60*time.Second, "get", "/"+chroot+"/controller")
	if err != nil {
		t.Fatalf("zkCli get /controller: %v", err)
	}
	var ctrl struct {
		Version   int    `json:"version"`
		BrokerID  int32  `json:"brokerid"`
		Timestamp string `json:"timestamp"`
	}
	line := strings.TrimSpace(got)
	if i := strings.LastIndex(line, "\n"); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &ctrl); err != nil {
		t.Fatalf("zkCli get /controller printed %q, not Kafka's JSON: %v", got, err)
	}
	if id, ok := c.Controller(); !ok || ctrl.BrokerID != id || c.Index(id) < 0 || (ctrl.Version != 1 && ctrl.Version != 2) || ctrl.Timestamp == "" {
		t.Fatalf("zkCli shows controller %+v; the cluster's controller is %d (ok=%v)", ctrl, id, ok)
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }
