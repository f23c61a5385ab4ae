package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// lockedBuffer is a bytes.Buffer written by the child's stderr copier and
// read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBrokerLoggerLevelsChangeOutput: a kafka-server process logs at INFO
// (Kafka's root level); IncrementalAlterConfigs on its BROKER_LOGGER
// resource silences a component at run time (root WARN) and turns one
// logger back on (kafka.server.KafkaApis INFO), as its stderr shows.
func TestBrokerLoggerLevelsChangeOutput(t *testing.T) {
	connect := zkserver.ConnectString(t)
	props := writeProps(t, "broker.id=8", "listeners=PLAINTEXT://127.0.0.1:0", "log.dirs="+t.TempDir(),
		"zookeeper.connect="+connect, "offsets.topic.replication.factor=1")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAFKA_SERVER_CHILD=1", "KAFKA_SERVER_ARGS="+props)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	zc, err := zkclient.Connect(connect, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	var addr string
	if !testcluster.Poll(30*time.Second, func() bool {
		info, ok, err := zc.GetBroker(8)
		if err != nil || !ok || len(info.Endpoints) == 0 {
			return false
		}
		addr = info.Endpoints[0].Host + ":" + strconv.Itoa(int(info.Endpoints[0].Port))
		return true
	}) {
		t.Fatalf("broker 8 did not register:\n%s", stderr.String())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "levels", 1, 1
	create.Topics = append(create.Topics, ct)
	if _, err := create.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}

	alter := func(typ kmsg.ConfigResourceType, name, key, value string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = typ, name
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = key, &value
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("IncrementalAlterConfigs %s %s=%s: %v %+v", name, key, value, err, resp)
		}
	}
	// logged reports a line of the API handler (kafka-apis) or of the
	// broker itself with retention.ms=ms.
	logged := func(out, msg, ms string) bool {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, `msg="`+msg+`"`) && strings.Contains(l, "configs=map[retention.ms:"+ms+"]") {
				return true
			}
		}
		return false
	}
	const apiMsg, brokerMsg = "updated topic config", "applied topic config change"
	waitLine := func(ms string) {
		t.Helper()
		if !testcluster.Poll(15*time.Second, func() bool { return logged(stderr.String(), apiMsg, ms) }) {
			t.Fatalf("no %q line for %s in:\n%s", apiMsg, ms, stderr.String())
		}
	}

	// Root at INFO: the API handler's INFO line shows.
	alter(kmsg.ConfigResourceTypeTopic, "levels", "retention.ms", "1001")
	waitLine("1001")
	// The broker applies the change when its config change listener gets
	// the notification, after the handler answered: wait for its line
	// before raising the root level.
	if !testcluster.Poll(15*time.Second, func() bool { return logged(stderr.String(), brokerMsg, "1001") }) {
		t.Fatalf("no %q line for 1001 at root=INFO in:\n%s", brokerMsg, stderr.String())
	}
	// Root at WARN silences it (and the broker's own INFO lines) ...
	alter(kmsg.ConfigResourceTypeBrokerLogger, "8", "root", "WARN")
	alter(kmsg.ConfigResourceTypeTopic, "levels", "retention.ms", "1002")
	// ... while kafka.server.KafkaApis at INFO brings the handler back.
	alter(kmsg.ConfigResourceTypeBrokerLogger, "8", "kafka.server.KafkaApis", "INFO")
	alter(kmsg.ConfigResourceTypeTopic, "levels", "retention.ms", "1003")
	waitLine("1003")
	out := stderr.String()
	if logged(out, apiMsg, "1002") {
		t.Fatalf("an INFO line passed root=WARN:\n%s", out)
	}
	if !logged(out, brokerMsg, "1001") || logged(out, brokerMsg, "1003") {
		t.Fatalf("the broker's own INFO line: shown at root=INFO, hidden at root=WARN:\n%s", out)
	}
}
