package zkclient_test

import (
	"testing"

	"github.com/klassik/klassik/zkpaths"
)

// PropagateLogDirEvent writes Kafka's LogDirEventNotificationSequenceZNode:
// /log_dir_event_notification/log_dir_event_<10 digits> holding exactly
// {"version":1,"broker":<id>,"event":1}, creating the parent if needed.
func TestPropagateLogDirEvent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		name, err := c.PropagateLogDirEvent(7)
		mustNoErr(t, err)
		if name != "log_dir_event_0000000000" {
			t.Fatalf("name %q", name)
		}
		data, _, err := c.Get(zkpaths.LogDirEventNotificationPath + "/" + name)
		mustNoErr(t, err)
		if string(data) != `{"version":1,"broker":7,"event":1}` {
			t.Fatalf("data %s", data)
		}
		ids, err := c.GetBrokerIDsFromLogDirEvents([]string{name})
		if err != nil || len(ids) != 1 || ids[0] != 7 {
			t.Fatalf("ids %v %v", ids, err)
		}
	})
}
