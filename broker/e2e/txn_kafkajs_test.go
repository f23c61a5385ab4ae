package e2e_test

import (
	"path/filepath"
	"testing"
	"time"
)

// The transactions suite (txn_driver_test.go) with kafkajs:
// testdata/clients/kafkajs_txn.js runs the story (producer.transaction(),
// send, sendOffsets, commit, abort) and reads the output back with
// readUncommitted false and true.

func TestTxnKafkaJS(t *testing.T) {
	node := requireTool(t, "node", "apt-get install -y nodejs")
	dir := clientsDir(t)
	if err := fileExists(filepath.Join(dir, "node_modules", "kafkajs", "package.json")); err != nil {
		t.Fatalf("kafkajs is not installed in testdata/clients: run (cd testdata/clients && npm ci) or bin/klassik-install-deps.sh: %v", err)
	}
	c := startTxnCluster(t)
	s := newTxnSpec(c, "kafkajs")
	prepareTxnTopics(t, c, s)
	script := filepath.Join(dir, "kafkajs_txn.js")
	out := runTxnClient(t, c, s, 180*time.Second, node, append([]string{script, "produce"}, s.args()...)...)
	verifyTxnStory(t, c, s, parseTxnLines(t, out), func(committed bool) []txnRecord {
		iso := "read_uncommitted"
		if committed {
			iso = "read_committed"
		}
		out := runTxnClient(t, c, s, 60*time.Second, node, append([]string{script, "consume"}, append(s.args(), "--isolation", iso)...)...)
		return parseTxnLines(t, out).recs
	})
}
