// Command kafka-broker-api-versions is Kafka's
// kafka-broker-api-versions.sh (kafka.admin.BrokerApiVersionsCommand,
// apache/kafka branch 2.8): it asks every broker of the cluster for its
// ApiVersions and prints each broker's ranges beside the versions the
// client can use. Run it through bin/kafka-broker-api-versions.sh.
//
// "The client" whose versions the "[usable: N]" column compares against is
// the franz-go client this tool is built with (kmsg's newest version of
// each request), where Kafka's tool uses its own Java client's.
//
// Output, as Kafka prints it (NodeApiVersions.toString(true)):
//
//	127.0.0.1:9092 (id: 1 rack: null) -> (
//		Produce(0): 0 to 9 [usable: 9],
//		...
//		DescribeCluster(60): 0 [usable: 0]
//	)
//
// APIs a ZooKeeper-mode Kafka 2.8 broker serves that the broker does not
// list are "Name(key): UNSUPPORTED"; keys the client does not know are
// "UNKNOWN(key): a to b". A broker whose ApiVersions fails is
// "host:port (id: 1 rack: null) -> ERROR: <exception>".
//
// Goroutines: none besides the franz-go client's, closed before run
// returns.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

const helpText = "This tool helps to retrieve broker version information."

var specs = append([]admintool.Spec{
	{Name: "bootstrap-server", HasArg: true, ArgName: "server(s) to use for bootstrapping", Help: "REQUIRED: The server to connect to."},
	{Name: "command-config", HasArg: true, ArgName: "command config property file", Help: "A property file containing configs to be passed to Admin Client."},
}, admintool.HelpSpecs...)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	p, special, err := admintool.ParseAdminCommand(specs, args)
	if err == nil && special == "" && !p.Has("bootstrap-server") {
		err = admintool.Usagef("Missing required argument \"[bootstrap-server]\"")
	}
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, stdout, stderr); done {
		return code
	}
	if err == nil {
		err = execute(ctx, p, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "Exception in thread \"main\" %s\n", admintool.JavaString(err))
		return 1
	}
	return 0
}

func execute(ctx context.Context, p *admintool.Options, out io.Writer) error {
	var props map[string]string
	if f, ok := p.Lookup("command-config"); ok {
		var err error
		if props, err = admintool.LoadProperties(f); err != nil {
			return err
		}
	}
	// The tool's own AdminClient: request.timeout.ms 5 s per call, retried
	// until the cluster answers.
	cl, timeout, err := admintool.NewClient(p.Value("bootstrap-server"), "broker-api-versions", 5*time.Second, props)
	if err != nil {
		return err
	}
	defer cl.Close()
	brokers, err := awaitBrokers(ctx, cl, timeout)
	if err != nil {
		return err
	}
	for _, b := range brokers {
		node := fmt.Sprintf("%s:%d (id: %d rack: %s)", b.Host, b.Port, b.NodeID, nullable(b.Rack))
		versions, err := apiVersions(ctx, cl, b.NodeID, timeout)
		if err != nil {
			fmt.Fprintf(out, "%s -> ERROR: %s\n", node, admintool.JavaString(err))
			continue
		}
		fmt.Fprintf(out, "%s -> %s\n", node, versionsText(versions))
	}
	return nil
}

func nullable(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// awaitBrokers is AdminClient.awaitBrokers and findAllBrokers: Metadata
// until it lists a broker.
func awaitBrokers(ctx context.Context, cl *kgo.Client, timeout time.Duration) ([]kmsg.MetadataResponseBroker, error) {
	for {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, cl)
		cancel()
		if err == nil && len(resp.Brokers) > 0 {
			return resp.Brokers, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func apiVersions(ctx context.Context, cl *kgo.Client, id int32, timeout time.Duration) ([]kmsg.ApiVersionsResponseApiKey, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := kmsg.NewPtrApiVersionsRequest()
	// v3+ requires the client's software name and version (KIP-511).
	req.ClientSoftwareName, req.ClientSoftwareVersion = "klassik-broker-api-versions", "2.8.2"
	resp, err := cl.Broker(int(id)).Request(rctx, req)
	if err != nil {
		return nil, admintool.ClientError(err, "API_VERSIONS")
	}
	r := resp.(*kmsg.ApiVersionsResponse)
	if ke := admintool.NewKafkaError(r.ErrorCode, nil); ke != nil {
		return nil, ke
	}
	return r.ApiKeys, nil
}

// versionsText is NodeApiVersions.toString(true) with franz-go as the
// client.
func versionsText(broker []kmsg.ApiVersionsResponseApiKey) string {
	text := map[int16]string{}
	for _, v := range broker {
		text[v.ApiKey] = apiVersionText(v)
	}
	for _, k := range zkBrokerAPIs {
		if _, ok := text[k]; !ok && clientMax(k) >= 0 {
			text[k] = apiName(k) + "(" + strconv.Itoa(int(k)) + "): UNSUPPORTED"
		}
	}
	keys := make([]int, 0, len(text))
	for k := range text {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = text[int16(k)]
	}
	return "(\n\t" + strings.Join(lines, ",\n\t") + "\n)"
}

func apiVersionText(v kmsg.ApiVersionsResponseApiKey) string {
	max := clientMax(v.ApiKey)
	var b strings.Builder
	if max < 0 {
		fmt.Fprintf(&b, "UNKNOWN(%d): ", v.ApiKey)
	} else {
		fmt.Fprintf(&b, "%s(%d): ", apiName(v.ApiKey), v.ApiKey)
	}
	if v.MinVersion == v.MaxVersion {
		fmt.Fprintf(&b, "%d", v.MinVersion)
	} else {
		fmt.Fprintf(&b, "%d to %d", v.MinVersion, v.MaxVersion)
	}
	switch {
	case max < 0:
	case max < v.MinVersion:
		b.WriteString(" [unusable: node too new]")
	case v.MaxVersion < 0:
		b.WriteString(" [unusable: node too old]")
	default:
		fmt.Fprintf(&b, " [usable: %d]", min(max, v.MaxVersion))
	}
	return b.String()
}

// clientMax is the newest version of the request franz-go can send, -1
// for a key it does not know.
func clientMax(key int16) int16 {
	r := kmsg.RequestForKey(key)
	if r == nil {
		return -1
	}
	return r.MaxVersion()
}

// apiName is Kafka's ApiKeys name of a key (kmsg's for keys newer than
// this table).
func apiName(key int16) string {
	if int(key) < len(kafkaAPINames) && key >= 0 {
		return kafkaAPINames[key]
	}
	return kmsg.NameForKey(key)
}

// kafkaAPINames are Kafka's ApiKeys names, by key.
var kafkaAPINames = []string{
	"Produce", "Fetch", "ListOffsets", "Metadata", "LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown",
	"OffsetCommit", "OffsetFetch", "FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup", "DescribeGroups",
	"ListGroups", "SaslHandshake", "ApiVersions", "CreateTopics", "DeleteTopics", "DeleteRecords", "InitProducerId",
	"OffsetForLeaderEpoch", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "WriteTxnMarkers", "TxnOffsetCommit",
	"DescribeAcls", "CreateAcls", "DeleteAcls", "DescribeConfigs", "AlterConfigs", "AlterReplicaLogDirs", "DescribeLogDirs",
	"SaslAuthenticate", "CreatePartitions", "CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken",
	"DescribeDelegationToken", "DeleteGroups", "ElectLeaders", "IncrementalAlterConfigs", "AlterPartitionReassignments",
	"ListPartitionReassignments", "OffsetDelete", "DescribeClientQuotas", "AlterClientQuotas", "DescribeUserScramCredentials",
	"AlterUserScramCredentials", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "DescribeQuorum", "AlterIsr", "UpdateFeatures",
	"Envelope", "FetchSnapshot", "DescribeCluster", "DescribeProducers", "BrokerRegistration", "BrokerHeartbeat",
	"UnregisterBroker", "DescribeTransactions", "ListTransactions", "AllocateProducerIds",
}

// zkBrokerAPIs are the keys Kafka 2.8's ZooKeeper-mode broker serves
// (ApiKeys.zkBrokerApis): listed as UNSUPPORTED when a broker omits one.
var zkBrokerAPIs = func() []int16 {
	var out []int16
	for k := int16(0); k <= 51; k++ {
		out = append(out, k)
	}
	return append(out, 56, 57, 60, 61)
}()
