package zkclient_test

import (
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// TestZkCliSeesKafkaJSON: "a user who points zkCli at our ensemble sees the
// same tree ... and the same bytes". We
// build the nodes of the guided tour and read them back with Debian's zkCli.
func TestZkCliSeesKafkaJSON(t *testing.T) {
	b := newRealBackend(t)
	c := b.client(t)
	mustNoErr(t, c.EnsureTopLevelPaths())
	id, err := c.GetOrCreateClusterID()
	mustNoErr(t, err)
	info := zkpaths.BrokerInfo{ID: 1, JMXPort: -1, Timestamp: 1700000000123,
		Endpoints: []zkpaths.EndPoint{{ListenerName: "PLAINTEXT", Host: "kafka-1.example.com", Port: 9092, SecurityProtocol: "PLAINTEXT"}}}
	_, err = c.RegisterBroker(info)
	mustNoErr(t, err)
	epoch, ver, err := c.RegisterControllerAndIncrementEpoch(1)
	mustNoErr(t, err)
	assign := zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}, 2: {3, 1, 2}}, TopicID: "ztFyzQr5QwmEYeGhG6khTg"}
	mustNoErr(t, c.CreateTopic("orders", assign, nil))
	tp := common.TopicPartition{Topic: "orders", Partition: 0}
	_, err = createState(c, ver, tp, zkpaths.LeaderAndIsr{Leader: 1, ISR: []int32{1, 2, 3}, ControllerEpoch: epoch})
	mustNoErr(t, err)
	ctrl, _, err := c.Get(zkpaths.ControllerPath)
	mustNoErr(t, err)

	want := map[string]string{
		"/cluster/id":            `{"version":"1","id":"` + id + `"}`,
		"/brokers/ids/1":         string(golden(t, "broker_v5.json")),
		"/controller":            string(ctrl),
		"/controller_epoch":      "1",
		"/brokers/topics/orders": string(golden(t, "topic_v3.json")),
		"/brokers/topics/orders/partitions/0/state": string(golden(t, "state.json")),
		"/config/topics/orders":                     string(golden(t, "config_empty.json")),
		"/brokers":                                  "null",
	}
	// One zkCli process reads the whole script (one JVM start).
	paths := []string{"/cluster/id", "/brokers/ids/1", "/controller", "/controller_epoch", "/brokers/topics/orders",
		"/brokers/topics/orders/partitions/0/state", "/config/topics/orders", "/brokers"}
	script := []string{"ls /"}
	for _, p := range paths {
		script = append(script, "get "+p)
	}
	out, err := zkserver.ZkCliScript(b.srv.Addr()+b.chroot, 60*time.Second, script...)
	if err != nil {
		t.Fatalf("zkCli: %v", err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != len(script) {
		t.Fatalf("zkCli printed %d lines for %d commands:\n%s", len(lines), len(script), out)
	}
	if lines[0] != "[admin, brokers, cluster, config, consumers, controller, controller_epoch, isr_change_notification, latest_producer_id_block, log_dir_event_notification]" {
		t.Errorf("zkCli ls / = %q", lines[0])
	}
	for i, p := range paths {
		if got := lines[i+1]; got != want[p] {
			t.Errorf("zkCli get %s:\n got %q\nwant %q", p, got, want[p])
		}
	}
}
