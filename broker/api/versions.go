package api

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// versionRange is one row of the ApiVersions table.
type versionRange struct{ min, max int16 }

// kafka34Ranges is what Apache Kafka 3.4 advertises in ZooKeeper mode for the
// keys this package serves. The advertised table is this
// range capped by kmsg's MaxVersion, so a key whose kmsg type lags behind
// never advertises a version we could not decode. Keys absent here are not
// served: the network layer closes connections that use them.
var kafka34Ranges = map[int16]versionRange{
	0:  {0, 9},  // Produce
	1:  {0, 13}, // Fetch
	2:  {0, 7},  // ListOffsets
	3:  {0, 12}, // Metadata
	4:  {0, 7},  // LeaderAndIsr
	5:  {0, 4},  // StopReplica
	6:  {0, 8},  // UpdateMetadata
	7:  {0, 3},  // ControlledShutdown
	8:  {0, 8},  // OffsetCommit
	9:  {0, 8},  // OffsetFetch
	10: {0, 4},  // FindCoordinator
	11: {0, 9},  // JoinGroup
	12: {0, 4},  // Heartbeat
	13: {0, 5},  // LeaveGroup
	14: {0, 5},  // SyncGroup
	15: {0, 5},  // DescribeGroups
	16: {0, 4},  // ListGroups
	17: {0, 1},  // SaslHandshake
	18: {0, 3},  // ApiVersions
	19: {0, 7},  // CreateTopics
	20: {0, 6},  // DeleteTopics
	21: {0, 2},  // DeleteRecords
	22: {0, 4},  // InitProducerId
	23: {0, 4},  // OffsetForLeaderEpoch
	24: {0, 3},  // AddPartitionsToTxn
	25: {0, 3},  // AddOffsetsToTxn
	26: {0, 3},  // EndTxn
	27: {0, 1},  // WriteTxnMarkers
	28: {0, 3},  // TxnOffsetCommit
	29: {0, 3},  // DescribeAcls
	30: {0, 3},  // CreateAcls
	31: {0, 3},  // DeleteAcls
	32: {0, 4},  // DescribeConfigs
	33: {0, 2},  // AlterConfigs
	34: {0, 2},  // AlterReplicaLogDirs
	35: {0, 2},  // DescribeLogDirs (v3's top-level error and v4's sizes are not served)
	36: {0, 2},  // SaslAuthenticate
	37: {0, 3},  // CreatePartitions
	42: {0, 2},  // DeleteGroups
	43: {0, 2},  // ElectLeaders
	44: {0, 1},  // IncrementalAlterConfigs
	45: {0, 0},  // AlterPartitionReassignments
	46: {0, 0},  // ListPartitionReassignments
	47: {0, 0},  // OffsetDelete
	48: {0, 1},  // DescribeClientQuotas
	49: {0, 1},  // AlterClientQuotas
	50: {0, 0},  // DescribeUserScramCredentials
	51: {0, 0},  // AlterUserScramCredentials
	60: {0, 0},  // DescribeCluster
	61: {0, 0},  // DescribeProducers
	65: {0, 0},  // DescribeTransactions
	66: {0, 0},  // ListTransactions
}

// advertised is the computed table: kafka34Ranges ∩ [0, kmsg max].
var advertised = func() map[int16]versionRange {
	out := make(map[int16]versionRange, len(kafka34Ranges))
	for key, r := range kafka34Ranges {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		if m := req.MaxVersion(); m < r.max {
			r.max = m
		}
		out[key] = r
	}
	return out
}()

// Versions reports the version range of key; ok is false for keys the broker
// does not serve. It implements network.Handler.
func (a *Apis) Versions(key int16) (minVersion, maxVersion int16, ok bool) {
	r, ok := advertised[key]
	if !ok || !a.enabled(key) {
		return 0, 0, false
	}
	return r.min, r.max, true
}

// apiKeys returns the advertised table sorted by key, for ApiVersions.
func (a *Apis) apiKeys() []kmsg.ApiVersionsResponseApiKey {
	keys := make([]int16, 0, len(advertised))
	for k := range advertised {
		if a.enabled(k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make([]kmsg.ApiVersionsResponseApiKey, 0, len(keys))
	for _, k := range keys {
		e := kmsg.NewApiVersionsResponseApiKey()
		e.ApiKey = k
		e.MinVersion = advertised[k].min
		e.MaxVersion = advertised[k].max
		out = append(out, e)
	}
	return out
}
