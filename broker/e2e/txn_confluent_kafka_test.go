package e2e_test

import (
	"path/filepath"
	"testing"
	"time"
)

// The transactions suite (txn_driver_test.go) with confluent-kafka
// (librdkafka): testdata/clients/confluent_kafka_txn.py runs the story
// (init_transactions, begin/commit/abort_transaction,
// send_offsets_to_transaction with a read_committed group consumer's
// positions and group metadata) and reads the output back at both
// isolation levels.

func TestTxnConfluentKafka(t *testing.T) {
	requirePython(t, "confluent_kafka", "python3-confluent-kafka")
	c := startTxnCluster(t)
	s := newTxnSpec(c, "confluent-kafka")
	prepareTxnTopics(t, c, s)
	script := filepath.Join(clientsDir(t), "confluent_kafka_txn.py")
	out := runTxnClient(t, c, s, 180*time.Second, "/usr/bin/python3", append([]string{script, "produce"}, s.args()...)...)
	verifyTxnStory(t, c, s, parseTxnLines(t, out), func(committed bool) []txnRecord {
		iso := "read_uncommitted"
		if committed {
			iso = "read_committed"
		}
		out := runTxnClient(t, c, s, 60*time.Second, "/usr/bin/python3", append([]string{script, "consume"}, append(s.args(), "--isolation", iso)...)...)
		return parseTxnLines(t, out).recs
	})
}
