package config

import (
	"errors"
	"strings"
	"testing"
)

// TestAPIVersionOrder: versions order by release and internal version; a
// short form is the release's last internal version (Kafka's ApiVersion).
func TestAPIVersionOrder(t *testing.T) {
	ordered := []string{"0.8.0", "0.9.0", "0.10.0-IV0", "0.10.1-IV2", "0.10.2-IV0", "0.10.2",
		"0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "0.11.0", "1.0-IV0", "1.1", "2.7-IV0", "2.7-IV1", "2.8-IV0", "2.8-IV1", "2.8.1", "3.0"}
	for i := 1; i < len(ordered); i++ {
		a, b := mustAPIVersion(ordered[i-1]), mustAPIVersion(ordered[i])
		if a.Compare(b) > 0 || b.Compare(a) < 0 {
			t.Errorf("%s should not come after %s", ordered[i-1], ordered[i])
		}
	}
	if mustAPIVersion("2.8").Compare(mustAPIVersion("2.8.1")) != 0 {
		t.Error("a patch level after the release must be ignored")
	}
	if _, err := ParseAPIVersion("banana"); err == nil {
		t.Error("banana parsed")
	}
}

// TestInterBrokerProtocolTruncation: "isOffsetForLeaderEpochSupported =
// interBrokerProtocolVersion >= KAFKA_0_11_0_IV2" (Kafka 2.8's
// ReplicaFetcherThread); truncation on fetch from 2.7-IV1.
func TestInterBrokerProtocolTruncation(t *testing.T) {
	for _, tc := range []struct {
		ibp                 string
		epochs, lastFetched bool
	}{
		{"", true, true}, // the default, 2.8-IV1
		{"0.10.2", false, false},
		{"0.11.0-IV1", false, false},
		{"0.11.0", true, false},
		{"2.6", true, false},
		{"2.7-IV1", true, true},
	} {
		props := base()
		if tc.ibp != "" {
			props["inter.broker.protocol.version"] = tc.ibp
		}
		rc := mustFromMap(t, props).Replica()
		if rc.OffsetForLeaderEpoch != tc.epochs || rc.LastFetchedEpoch != tc.lastFetched {
			t.Errorf("IBP %q: OffsetForLeaderEpoch %v LastFetchedEpoch %v, want %v %v", tc.ibp, rc.OffsetForLeaderEpoch, rc.LastFetchedEpoch, tc.epochs, tc.lastFetched)
		}
	}
}

// TestOldInterBrokerProtocolRefusals: what Kafka 2.8 refuses at start-up
// with an old inter.broker.protocol.version is refused too, naming the
// key; the plain old IBP starts.
func TestOldInterBrokerProtocolRefusals(t *testing.T) {
	mustFromMap(t, with("inter.broker.protocol.version", "0.10.2"))
	mustFromMap(t, with("inter.broker.protocol.version", "0.10.2", "log.message.format.version", "0.10.2"))
	for _, tc := range []struct {
		props    map[string]string
		key, msg string
	}{
		{with("inter.broker.protocol.version", "0.10.2", "log.message.format.version", "2.8"), "log.message.format.version",
			"2.8 can only be used when inter.broker.protocol.version is set to version 0.11.0 or higher"},
		{with("inter.broker.protocol.version", "0.9.0", "log.message.format.version", "0.10.1"), "log.message.format.version",
			"can only be used when inter.broker.protocol.version is set to version 0.10.0 or higher"},
		{with("inter.broker.protocol.version", "2.0", "offsets.topic.compression.codec", "4"), "offsets.topic.compression.codec",
			"zstd can only be used when inter.broker.protocol.version is set to version 2.1 or higher"},
	} {
		_, err := FromMap(tc.props)
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("%v: error %v, want a ValidationError", tc.props, err)
		}
		found := false
		for _, p := range ve.Problems {
			found = found || p.Key == tc.key && strings.Contains(p.Msg, tc.msg)
		}
		if !found {
			t.Errorf("problems %v, want %s: %s", ve.Problems, tc.key, tc.msg)
		}
	}
}
