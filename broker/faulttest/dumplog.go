package faulttest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// batchLine matches the batch lines of kafka-dump-log (Kafka 3.4 format).
var batchLine = regexp.MustCompile(`^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*partitionLeaderEpoch: (-?\d+) .* crc: (\d+) isvalid: (true|false)`)

// DumpLogBatches runs the built kafka-dump-log over a partition's segment
// files and returns, for each batch wholly below end, a line
// "<base>..<last> count=<n> epoch=<e> crc=<c>": what an operator would
// compare between replicas with kafka-dump-log.sh. Position is left out
// (replicas may roll segments at different points). A batch printed as
// invalid is an error.
func DumpLogBatches(logDir, topic string, partition int32, end int64) ([]string, error) {
	files, err := SegmentFiles(logDir, topic, partition)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no segment files for %s-%d in %s", topic, partition, logDir)
	}
	out, err := RunTool(60*time.Second, "kafka-dump-log", "--files", strings.Join(files, ","))
	if err != nil {
		// A torn tail being written makes the tool exit 1; keep what it
		// printed and judge the batches below end only.
		if !strings.Contains(out, "baseOffset:") {
			return nil, err
		}
	}
	return parseDumpLog(out, end)
}

// parseDumpLog extracts the batches below end from kafka-dump-log output.
// Invariants (FuzzParseDumpLog): never panics; every returned batch lies
// below end.
func parseDumpLog(out string, end int64) ([]string, error) {
	var batches []string
	for _, line := range strings.Split(out, "\n") {
		m := batchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		base, err1 := strconv.ParseInt(m[1], 10, 64)
		last, err2 := strconv.ParseInt(m[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("kafka-dump-log line %q: bad offsets", line)
		}
		if last >= end {
			continue
		}
		if base < 0 || last < base {
			return nil, fmt.Errorf("kafka-dump-log line %q: offsets out of order", line)
		}
		if m[6] != "true" {
			return nil, fmt.Errorf("kafka-dump-log reports an invalid batch below %d: %s", end, line)
		}
		batches = append(batches, fmt.Sprintf("%d..%d count=%s epoch=%s crc=%s", base, last, m[3], m[4], m[5]))
	}
	return batches, nil
}
