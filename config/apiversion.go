package config

import (
	"fmt"
	"strconv"
	"strings"
)

// APIVersion is a parsed Kafka ApiVersion string, the value of
// inter.broker.protocol.version and log.message.format.version (Kafka's
// kafka.api.ApiVersion): 0.8.0 ... 0.11.0-IV2, 1.0-IV0 ... 2.8-IV1 and
// later. Versions order by release, then by internal version (IV); a short
// form without -IVn ("0.10.2", "2.7") means the release's last internal
// version, as Kafka maps it.
type APIVersion struct {
	Major, Minor, Patch int // 0.10.2 is {0, 10, 2}; 2.8 is {2, 8, 0}
	IV                  int // internal version; latestIV for a short form
	text                string
}

// latestIV marks a short form: the release's last internal version.
const latestIV = 1 << 20

// ParseAPIVersion parses an ApiVersion string. A patch level after the
// release ("2.8.1") is ignored, as Kafka does.
func ParseAPIVersion(s string) (APIVersion, error) {
	if !validAPIVersion(s) {
		return APIVersion{}, fmt.Errorf("%q is not a valid Kafka version (e.g. 2.8 or 2.8-IV1)", s)
	}
	v := APIVersion{IV: latestIV, text: s}
	rel := s
	if i := strings.Index(s, "-IV"); i >= 0 {
		rel = s[:i]
		v.IV, _ = strconv.Atoi(s[i+3:])
	}
	parts := strings.Split(rel, ".")
	n := make([]int, 3)
	for i := 0; i < len(parts) && i < 3; i++ {
		n[i], _ = strconv.Atoi(parts[i])
	}
	v.Major, v.Minor = n[0], n[1]
	if v.Major == 0 { // 0.x.y releases have three segments
		v.Patch = n[2]
	}
	return v, nil
}

// mustAPIVersion is ParseAPIVersion for the constants below.
func mustAPIVersion(s string) APIVersion {
	v, err := ParseAPIVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Compare returns -1, 0 or 1 as v is before, equal to or after w.
func (v APIVersion) Compare(w APIVersion) int {
	for _, d := range [...]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch, v.IV - w.IV} {
		switch {
		case d < 0:
			return -1
		case d > 0:
			return 1
		}
	}
	return 0
}

// AtLeast reports whether v is w or later.
func (v APIVersion) AtLeast(w APIVersion) bool { return v.Compare(w) >= 0 }

// String is the text the version was parsed from.
func (v APIVersion) String() string { return v.text }

// The inter.broker.protocol.version thresholds Klassik honours (Kafka 2.8's
// ReplicaFetcherThread and ApiVersion).
var (
	// IBPOffsetForLeaderEpoch (KIP-101): from here a new follower asks the
	// leader where its latest epoch ends (OffsetForLeaderEpoch) and
	// truncates there; before it, the follower truncates to its own high
	// watermark, as Kafka did before 0.11 (isOffsetForLeaderEpochSupported).
	IBPOffsetForLeaderEpoch = mustAPIVersion("0.11.0-IV2")
	// IBPTruncationOnFetch (KIP-595's Fetch v12): from here a follower sends
	// the epoch of its last batch (LastFetchedEpoch) so the leader can
	// answer a diverging epoch (isTruncationOnFetchSupported).
	IBPTruncationOnFetch = mustAPIVersion("2.7-IV1")
	// ibpRecordV2 is the first version whose record format is v2 (the
	// batches with a partition leader epoch and producer ids).
	ibpRecordV2 = mustAPIVersion("0.11.0-IV0")
	// ibpRecordV1 is the first version whose record format is v1
	// (timestamps).
	ibpRecordV1 = mustAPIVersion("0.10.0-IV0")
	// ibpZstd is the first version that may compress with zstd (KIP-110).
	ibpZstd = mustAPIVersion("2.1-IV0")
)

// recordVersion is the record format (0, 1 or 2) of an ApiVersion, as
// Kafka's ApiVersion.recordVersion.
func (v APIVersion) recordVersion() int {
	switch {
	case v.AtLeast(ibpRecordV2):
		return 2
	case v.AtLeast(ibpRecordV1):
		return 1
	}
	return 0
}

// minVersionFor is Kafka's ApiVersion.minSupportedFor(recordVersion), in
// its short form for messages.
func minVersionFor(record int) string {
	switch record {
	case 2:
		return "0.11.0"
	case 1:
		return "0.10.0"
	}
	return "0.8.0"
}

// InterBrokerProtocol returns inter.broker.protocol.version parsed
// (Validate has checked it; an unparsable value reads as the default).
func (c *Config) InterBrokerProtocol() APIVersion {
	v, err := ParseAPIVersion(c.InterBrokerProtocolVersion)
	if err != nil {
		return mustAPIVersion("2.8-IV1")
	}
	return v
}

// validateProtocolCombinations refuses, at start-up, what an old
// inter.broker.protocol.version forbids in Kafka 2.8 (KafkaConfig's
// validateValues): a record format or a codec newer than the protocol.
// Klassik still writes v2 batches at every version (log.message.format.version
// documents it), so the leader epochs are in the batches and in
// leader-epoch-checkpoint even at 0.10.2; what the old protocol changes is
// that followers do not use them.
func (c *Config) validateProtocolCombinations(add func(key, format string, args ...any)) {
	ibp, err := ParseAPIVersion(c.InterBrokerProtocolVersion)
	if err != nil {
		return // reported by validateVersions
	}
	if c.IsSet("log.message.format.version") {
		if f, err := ParseAPIVersion(c.LogMessageFormatVersion); err == nil && f.recordVersion() > ibp.recordVersion() {
			add("log.message.format.version", "%s can only be used when inter.broker.protocol.version is set to version %s or higher",
				c.LogMessageFormatVersion, minVersionFor(f.recordVersion()))
		}
	}
	if c.OffsetsTopicCompressionCodec == 4 && !ibp.AtLeast(ibpZstd) {
		add("offsets.topic.compression.codec", "zstd can only be used when inter.broker.protocol.version is set to version 2.1 or higher")
	}
}
