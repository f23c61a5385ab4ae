package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

type kfakeTarget struct {
	t  *testing.T
	f  *kfake.Cluster
	cs testcluster.Clients
}

func (k *kfakeTarget) Bootstrap() []string { return k.f.ListenAddrs() }
func (k *kfakeTarget) Client(opts ...kgo.Opt) *kgo.Client {
	return k.cs.New(k.t, "kfake", k.f.ListenAddrs(), opts...)
}
func (k *kfakeTarget) Admin(opts ...kgo.Opt) *kadm.Client { return kadm.NewClient(k.Client(opts...)) }
func (k *kfakeTarget) CreateTopic(topic string, partitions int32, rf int16, configs map[string]*string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := k.Admin().CreateTopic(ctx, partitions, rf, configs, topic); err != nil {
		k.t.Fatal(err)
	}
}
func (k *kfakeTarget) WaitLeaders(time.Duration, string, int32) {}

func startKfake(t *testing.T) *kfakeTarget {
	if os.Getenv("KFAKE_SCRATCH") == "" {
		t.Skip()
	}
	f, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	k := &kfakeTarget{t: t, f: f}
	t.Cleanup(func() { k.cs.Close(); f.Close() })
	return k
}

func TestScratchKfake(t *testing.T) {
	t.Run("franz-go", func(t *testing.T) {
		c := startKfake(t)
		s := newTxnSpec(c, "franz-go")
		prepareTxnTopics(t, c, s)
		var out txnOut
		runKgoTxnStory(t, c, s, &out)
		verifyTxnStory(t, c, s, parseTxnLines(t, out.Bytes()), nil)
	})
	t.Run("sarama", func(t *testing.T) {
		c := startKfake(t)
		s := newTxnSpec(c, "sarama")
		prepareTxnTopics(t, c, s)
		var out txnOut
		runSaramaTxnStory(t, c, s, &out)
		verifyTxnStory(t, c, s, parseTxnLines(t, out.Bytes()), func(committed bool) []txnRecord { return saramaReadTxn(t, c, s, committed) })
	})
	for _, sc := range []struct{ name, interp, script string }{{"confluent-kafka", "/usr/bin/python3", "confluent_kafka_txn.py"}, {"kafkajs", "node", "kafkajs_txn.js"}} {
		t.Run(sc.name, func(t *testing.T) {
			c := startKfake(t)
			s := newTxnSpec(c, sc.name)
			prepareTxnTopics(t, c, s)
			script := filepath.Join(clientsDir(t), sc.script)
			out := runTxnClient(t, c, s, 120*time.Second, sc.interp, append([]string{script, "produce"}, s.args()...)...)
			verifyTxnStory(t, c, s, parseTxnLines(t, out), func(committed bool) []txnRecord {
				iso := "read_uncommitted"
				if committed {
					iso = "read_committed"
				}
				out := runTxnClient(t, c, s, 60*time.Second, sc.interp, append([]string{script, "consume"}, append(s.args(), "--isolation", iso)...)...)
				return parseTxnLines(t, out).recs
			})
		})
	}
}
