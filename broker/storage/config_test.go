package storage

import "testing"

// TestLogConfigFromProps: topic properties override the defaults under
// Kafka's names, a number that does not parse is an error, and a negative
// retention.ms means unlimited.
func TestLogConfigFromProps(t *testing.T) {
	lc, err := LogConfigFromProps(map[string]string{
		"segment.bytes":       " 2048 ",
		"retention.ms":        "-5",
		"max.message.bytes":   "4096",
		"cleanup.policy":      "compact",
		"segment.index.bytes": "800",
	})
	if err != nil {
		t.Fatal(err)
	}
	if lc.SegmentBytes != 2048 || lc.RetentionMs != -1 || lc.MaxMessageBytes != 4096 || lc.SegmentIndexBytes != 800 {
		t.Fatalf("numbers: %+v", lc)
	}
	if !lc.CleanupPolicyCompact || lc.CleanupPolicyDelete {
		t.Fatalf("cleanup.policy: %+v", lc)
	}
	if d := DefaultLogConfig(); lc.FlushMs != d.FlushMs || lc.IndexIntervalBytes != d.IndexIntervalBytes {
		t.Fatalf("absent keys must keep the defaults: %+v", lc)
	}
	if _, err := LogConfigFromProps(map[string]string{"flush.ms": "soon"}); err == nil {
		t.Fatal("flush.ms=soon accepted")
	}
	if _, err := LogConfigFromProps(map[string]string{"index.interval.bytes": "x"}); err == nil {
		t.Fatal("index.interval.bytes=x accepted")
	}
}
