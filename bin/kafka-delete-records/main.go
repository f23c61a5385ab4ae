// Command kafka-delete-records is Kafka's kafka.admin.DeleteRecordsCommand
// (2.8): it reads a JSON file of partitions and offsets, asks each
// partition's leader to delete the records below the offset (DeleteRecords,
// API key 21) and prints each partition's new low watermark or its error.
// Run it through bin/kafka-delete-records.sh.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/common"
)

const helpText = "This tool helps to delete records of the given partitions down to the specified offset."

// timeout bounds the whole call, as the Java admin client's
// default.api.timeout.ms (60 s) does.
const timeout = 60 * time.Second

var specs = append([]admintool.Spec{
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: server(s) to use for bootstrapping", Help: "REQUIRED: The server to connect to."},
	{Name: "offset-json-file", HasArg: true, ArgName: "String: Offset json file path", Help: "REQUIRED: The JSON file with offset per partition. The format to use is:\n" +
		"{\"partitions\":\n  [{\"topic\": \"foo\", \"partition\": 1, \"offset\": 1}],\n \"version\":1\n}"},
	{Name: "command-config", HasArg: true, ArgName: "String: command config property file path", Help: "A property file containing configs to be passed to Admin Client."},
}, admintool.HelpSpecs...)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// request is a validated command line.
type request struct {
	bootstrap, offsetFile, commandConfig string
}

func parse(args []string) (*request, string, error) {
	o, special, err := admintool.ParseAdminCommand(specs, args)
	if o == nil {
		return nil, special, err
	}
	for _, name := range []string{"bootstrap-server", "offset-json-file"} {
		if !o.Has(name) {
			return nil, "", admintool.Usagef(`Missing required argument "[%s]"`, name)
		}
	}
	return &request{bootstrap: o.Value("bootstrap-server"), offsetFile: o.Value("offset-json-file"), commandConfig: o.Value("command-config")}, "", nil
}

// partitionOffset is one entry of the offset JSON file.
type partitionOffset struct {
	tp     common.TopicPartition
	offset int64
}

// parseOffsetJSON reads the offset file as DeleteRecordsCommand's
// parseOffsetJsonStringWithoutDedup does: version 1 (the default) with a
// "partitions" array of topic/partition/offset objects; duplicates are kept
// for the caller to refuse.
func parseOffsetJSON(data []byte) ([]partitionOffset, error) {
	var doc map[string]json.RawMessage
	if err := admintool.DecodeJSON(data, &doc); err != nil || doc == nil {
		return nil, &admintool.AdminOperation{Msg: "The input string is not a valid JSON"}
	}
	version := 1
	if raw, ok := doc["version"]; ok {
		if err := admintool.DecodeJSON(raw, &version); err != nil {
			return nil, &admintool.AdminOperation{Msg: fmt.Sprintf("Failed to read `version`: %s is not an int", raw)}
		}
	}
	if version != 1 {
		return nil, &admintool.AdminOperation{Msg: fmt.Sprintf("Not supported version field value %d", version)}
	}
	raw, ok := doc["partitions"]
	if !ok {
		return nil, &admintool.AdminOperation{Msg: "Missing partitions field"}
	}
	var entries []map[string]json.RawMessage
	if err := admintool.DecodeJSON(raw, &entries); err != nil {
		return nil, fmt.Errorf("Expected JSON array of partitions, found %s", raw)
	}
	out := make([]partitionOffset, 0, len(entries))
	for _, e := range entries {
		var po partitionOffset
		if err := admintool.Field(e, "topic", &po.tp.Topic); err != nil {
			return nil, err
		}
		if err := admintool.Field(e, "partition", &po.tp.Partition); err != nil {
			return nil, err
		}
		if err := admintool.Field(e, "offset", &po.offset); err != nil {
			return nil, err
		}
		out = append(out, po)
	}
	return out, nil
}

// duplicates lists the partitions named more than once, sorted.
func duplicates(pos []partitionOffset) []common.TopicPartition {
	seen := map[common.TopicPartition]int{}
	var dups []common.TopicPartition
	for _, po := range pos {
		seen[po.tp]++
		if seen[po.tp] == 2 {
			dups = append(dups, po.tp)
		}
	}
	return admintool.SortPartitions(dups)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	req, special, err := parse(args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, stdout, stderr); done {
		return code
	}
	if err != nil {
		return admintool.Fail(err, specs, stderr)
	}
	if err := execute(ctx, req, stdout); err != nil {
		return admintool.Fail(err, specs, stderr)
	}
	return 0
}

// execute is DeleteRecordsCommand.execute: read and check the file, send
// the deletions and print one line per partition (sorted; Kafka prints
// them in hash-map order).
func execute(ctx context.Context, req *request, out io.Writer) error {
	props, err := admintool.LoadOptionalProperties(req.commandConfig)
	if err != nil {
		return err
	}
	cl, _, err := admintool.NewClient(req.bootstrap, "adminclient-1", 30*time.Second, props)
	if err != nil {
		return err
	}
	defer cl.Close()
	data, err := admintool.ReadFile(req.offsetFile)
	if err != nil {
		return err
	}
	pos, err := parseOffsetJSON(data)
	if err != nil {
		return err
	}
	if dups := duplicates(pos); len(dups) > 0 {
		return &admintool.CommandFailed{Msg: "Offset json file contains duplicate topic partitions: " + admintool.JoinPartitions(dups, ",")}
	}
	offsets := kadm.Offsets{}
	for _, po := range pos {
		offsets.Add(kadm.Offset{Topic: po.tp.Topic, Partition: po.tp.Partition, At: po.offset, LeaderEpoch: -1})
	}
	fmt.Fprintln(out, "Executing records delete operation")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resps, err := kadm.NewClient(cl).DeleteRecords(ctx, offsets)
	if resps == nil {
		resps = kadm.DeleteRecordsResponses{}
	}
	if err != nil && len(resps) == 0 && ctx.Err() != nil {
		// The whole call timed out: every partition carries the same
		// error, as each of Kafka's futures would.
		for _, po := range pos {
			if resps[po.tp.Topic] == nil {
				resps[po.tp.Topic] = map[int32]kadm.DeleteRecordsResponse{}
			}
			resps[po.tp.Topic][po.tp.Partition] = kadm.DeleteRecordsResponse{Topic: po.tp.Topic, Partition: po.tp.Partition, Err: err}
		}
	}
	// A partition the metadata does not know gets no response; the Java
	// client fails its future with the metadata's error.
	for _, po := range pos {
		if _, ok := resps.Lookup(po.tp.Topic, po.tp.Partition); !ok {
			if resps[po.tp.Topic] == nil {
				resps[po.tp.Topic] = map[int32]kadm.DeleteRecordsResponse{}
			}
			resps[po.tp.Topic][po.tp.Partition] = kadm.DeleteRecordsResponse{Topic: po.tp.Topic, Partition: po.tp.Partition, Err: kerr.UnknownTopicOrPartition}
		}
	}
	fmt.Fprintln(out, "Records delete operation completed:")
	var lines []kadm.DeleteRecordsResponse
	resps.Each(func(r kadm.DeleteRecordsResponse) { lines = append(lines, r) })
	sort.Slice(lines, func(i, j int) bool {
		a := common.TopicPartition{Topic: lines[i].Topic, Partition: lines[i].Partition}
		return a.Compare(common.TopicPartition{Topic: lines[j].Topic, Partition: lines[j].Partition}) < 0
	})
	for _, r := range lines {
		tp := common.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if r.Err != nil {
			// ExecutionException.getMessage is the cause's toString.
			fmt.Fprintf(out, "partition: %s\terror: %s\n", tp, admintool.JavaString(admintool.ClientError(r.Err, "DELETE_RECORDS")))
			continue
		}
		fmt.Fprintf(out, "partition: %s\tlow_watermark: %d\n", tp, r.LowWatermark)
	}
	return nil
}
