package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

var timestampRE = regexp.MustCompile(`^\{"timestamp":\d+,"name":"([a-z_]+)"`)

// The script, as a process against a real ZooKeeper and broker: Kafka's
// event lines in order (startup, assignment, consumption summaries each
// followed by its commit, revocation at close, shutdown), with every
// record reported once and the commits landing in the group.
func TestVerifiableConsumerScript(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"}}, "vc", 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 6; i++ {
		r := &kgo.Record{Topic: "vc", Partition: int32(i % 2), Key: []byte{'k', byte('0' + i)}, Value: []byte{byte('0' + i)}}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	bs := strings.Join(c.Bootstrap(), ",")
	out, errOut, code := clitest.Script(t, nil, "kafka-verifiable-consumer.sh", "--bootstrap-server", bs, "--topic", "vc",
		"--group-id", "vg", "--max-messages", "6", "--verbose", "--session-timeout", "10000")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var names []string
	records := map[string]bool{}
	committed := map[float64]float64{}
	var summed float64
	for _, l := range lines {
		m := timestampRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("bad line %q\n%s", l, out)
		}
		names = append(names, m[1])
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch m[1] {
		case "partitions_assigned", "partitions_revoked":
			want := `"partitions":[{"topic":"vc","partition":0},{"topic":"vc","partition":1}]}`
			if !strings.HasSuffix(l, want) {
				t.Errorf("%s: %q", m[1], l)
			}
		case "record_data":
			if !regexp.MustCompile(`^\{"timestamp":\d+,"name":"record_data","key":"k\d","value":"\d","topic":"vc","partition":[01],"offset":[0-2]\}$`).MatchString(l) {
				t.Errorf("record_data: %q", l)
			}
			records[ev["value"].(string)] = true
		case "records_consumed":
			if !regexp.MustCompile(`^\{"timestamp":\d+,"name":"records_consumed","count":\d+,"partitions":\[(\{"topic":"vc","partition":[01],"count":\d+,"minOffset":\d+,"maxOffset":\d+\},?)+\]\}$`).MatchString(l) {
				t.Errorf("records_consumed: %q", l)
			}
			for _, p := range ev["partitions"].([]any) {
				summed += p.(map[string]any)["count"].(float64)
			}
		case "offsets_committed":
			if !regexp.MustCompile(`^\{"timestamp":\d+,"name":"offsets_committed","offsets":\[(\{"topic":"vc","partition":[01],"offset":\d+\},?)+\],"success":true\}$`).MatchString(l) {
				t.Errorf("offsets_committed: %q", l)
			}
			for _, o := range ev["offsets"].([]any) {
				om := o.(map[string]any)
				committed[om["partition"].(float64)] = om["offset"].(float64)
			}
		}
	}
	seq := strings.Join(names, ",")
	shape := regexp.MustCompile(`^startup_complete,partitions_assigned,((record_data,)+records_consumed,offsets_committed,)+partitions_revoked,shutdown_complete$`)
	if !shape.MatchString(seq) || summed != 6 || len(records) != 6 || committed[0] != 3 || committed[1] != 3 {
		t.Fatalf("events %s\nsummed %v records %v committed %v\n%s", seq, summed, records, committed, out)
	}
	resp, err := c.Admin().FetchOffsets(ctx, "vg")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		if o, ok := resp.Lookup("vc", p); !ok || o.At != 3 {
			t.Errorf("committed offset of vc-%d: %+v", p, o)
		}
	}

	_, errOut, code = clitest.Script(t, nil, "kafka-verifiable-consumer.sh", "--bootstrap-server", bs, "--topic", "vc")
	if code != 1 || !strings.HasSuffix(errOut, "verifiable-consumer: error: argument --group-id is required\n") {
		t.Fatalf("missing group: %d %q", code, errOut)
	}
}
