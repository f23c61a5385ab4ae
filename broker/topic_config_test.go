package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// A topic's overrides belong to that topic: deleting it drops them from
// every broker's config cache, so a topic re-created under the same name
// without overrides gets the broker defaults. Here the first incarnation
// has min.insync.replicas=3 with two replicas (acks=all is refused with
// NOT_ENOUGH_REPLICAS); the second has no override, so the broker default
// (1) applies and acks=all succeeds.
func TestRecreatedTopicForgetsDeletedOverrides(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	adm := c.Admin()
	ctx := ctxT(t, 90*time.Second)
	const topic = "reborn"

	leaderOf := func() int32 {
		t.Helper()
		var leader int32 = -1
		c.WaitFor(15*time.Second, "a leader of "+topic+" known to every broker", func() bool {
			st, ok := c.PartitionState(topic, 0)
			if !ok || st.Leader < 0 {
				return false
			}
			for i := 0; i < c.N(); i++ {
				if ms, ok := c.Broker(i).Metadata().Partition(topic, 0); !ok || ms.Leader != st.Leader {
					return false
				}
			}
			leader = st.Leader
			return true
		})
		return leader
	}
	acksAll := func(want int16, what string) {
		t.Helper()
		var got int16
		if !testcluster.Poll(20*time.Second, func() bool {
			got = produceAcks(ctx, t, c.Direct(c.Index(leaderOf())), topic, -1)
			return got == want
		}) {
			t.Fatalf("%s: acks=all produce answered %v, want %v", what, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
		}
	}
	c.CreateTopic(topic, 1, 2, map[string]*string{"min.insync.replicas": kadm.StringPtr("3")})
	if v, src := testcluster.TopicConfig(t, adm, topic, "min.insync.replicas"); v != "3" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("first incarnation: min.insync.replicas %s from %v", v, src)
	}
	acksAll(kerr.NotEnoughReplicas.Code, "ISR 2 < min.insync.replicas 3")

	if _, err := adm.DeleteTopic(ctx, topic); err != nil {
		t.Fatalf("delete: %v", err)
	}
	c.WaitFor(30*time.Second, "the topic and its deletion marker gone from ZooKeeper, every metadata cache and every log dir", func() bool {
		// The controller removes the deletion marker after the topic's
		// znode; until then a CreateTopics answers TOPIC_ALREADY_EXISTS
		// ("marked for deletion"), as Kafka's does.
		if marked, _, err := c.ZK().Exists(zkpaths.DeleteTopicPath(topic)); err != nil || marked {
			return false
		}
		topics, err := c.ZK().GetAllTopics()
		if err != nil {
			return false
		}
		for _, n := range topics {
			if n == topic {
				return false
			}
		}
		for i := 0; i < c.N(); i++ {
			b := c.Broker(i)
			if b.Metadata().Contains(topic) {
				return false
			}
			if _, ok := b.LogManager().GetLog(replicaTP(topic, 0)); ok {
				return false
			}
		}
		return true
	})

	c.CreateTopic(topic, 1, 2, nil)
	if v, src := testcluster.TopicConfig(t, adm, topic, "min.insync.replicas"); v != "1" || src == kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("second incarnation: min.insync.replicas %s from %v, want the default 1", v, src)
	}
	acksAll(0, "no override: the broker default min.insync.replicas 1")
}
