package admintool

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/config"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LoadProperties reads a Java properties file (an --admin.config or
// --command-config), with java.util.Properties' syntax.
func LoadProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return config.ParseProperties(f)
}

// LoadOptionalProperties is LoadProperties for an optional config-file
// option: an empty path yields an empty (writable) map.
func LoadOptionalProperties(path string) (map[string]string, error) {
	if path == "" {
		return map[string]string{}, nil
	}
	return LoadProperties(path)
}

// NewClient builds the franz-go client a tool uses in --bootstrap-server
// mode. props are admin client properties; client.id, request.timeout.ms
// and the security properties (clitools/security) are honoured. The
// returned timeout bounds every call.
func NewClient(bootstrap, clientID string, timeout time.Duration, props map[string]string) (*kgo.Client, time.Duration, error) {
	if v, ok := props["client.id"]; ok {
		clientID = v
	}
	if v, ok := props["request.timeout.ms"]; ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms <= 0 {
			return nil, 0, fmt.Errorf("Invalid value %s for configuration request.timeout.ms", v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	secOpts, err := security.Opts(props)
	if err != nil {
		return nil, 0, err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(config.SplitList(bootstrap)...), kgo.ClientID(clientID),
		kgo.RetryTimeout(timeout)}, secOpts...)...)
	if err != nil {
		return nil, 0, err
	}
	return cl, timeout, nil
}

// Election types of ElectLeaders v1+ (Kafka's ElectionType).
const (
	ElectionPreferred int8 = 0
	ElectionUnclean   int8 = 1
)

// ElectionTypeName is Kafka's ElectionType enum constant name.
func ElectionTypeName(t int8) string {
	if t == ElectionUnclean {
		return "UNCLEAN"
	}
	return "PREFERRED"
}

// ElectionResults classifies ElectLeaders' per-partition answers as Kafka's
// election tools do.
type ElectionResults struct {
	Succeeded []common.TopicPartition         // sorted
	Noop      []common.TopicPartition         // ELECTION_NOT_NEEDED, sorted
	Failed    map[common.TopicPartition]error // every other error (a *KafkaError)
}

// FailedSorted lists the failed partitions in order.
func (r ElectionResults) FailedSorted() []common.TopicPartition {
	var out []common.TopicPartition
	for tp := range r.Failed {
		out = append(out, tp)
	}
	return SortPartitions(out)
}

// ElectLeaders sends one ElectLeaders request (routed by the client to the
// controller) for tps, or for every partition when tps is nil, and
// classifies the answers. A top-level error, an unsupported API or a
// transport failure is returned as an error in the Java client's terms
// (ClientError).
func ElectLeaders(ctx context.Context, cl *kgo.Client, typ int8, tps []common.TopicPartition, timeout time.Duration) (ElectionResults, error) {
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType = typ
	req.TimeoutMillis = int32(timeout / time.Millisecond)
	if tps != nil {
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for _, g := range GroupByTopic(tps) {
			t := kmsg.NewElectLeadersRequestTopic()
			t.Topic, t.Partitions = g.Topic, g.Partitions
			req.Topics = append(req.Topics, t)
		}
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return ElectionResults{}, ClientError(err, "ELECT_LEADERS")
	}
	if resp.Version >= 1 && resp.ErrorCode != 0 {
		return ElectionResults{}, NewKafkaError(resp.ErrorCode, nil)
	}
	res := ElectionResults{Failed: map[common.TopicPartition]error{}}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			tp := common.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			switch ke := NewKafkaError(p.ErrorCode, p.ErrorMessage); {
			case ke == nil:
				res.Succeeded = append(res.Succeeded, tp)
			case ke.Code == kerr.ElectionNotNeeded.Code:
				res.Noop = append(res.Noop, tp)
			default:
				res.Failed[tp] = ke
			}
		}
	}
	SortPartitions(res.Succeeded)
	SortPartitions(res.Noop)
	return res, nil
}
