package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// records is how many records each client produces and consumes.
const records = 10000

// TestClients: with a real ZooKeeper and three brokers (racks a, b, c), each
// client produces 10,000 records to its own 6-partition, RF=3 topic and reads
// them back with no loss, duplication or reordering within a partition.
func TestClients(t *testing.T) {
	c := startCluster(t)
	boot := strings.Join(c.Bootstrap(), ",")

	t.Run("kcat", func(t *testing.T) {
		kcat := requireTool(t, "kcat", "apt-get install -y kcat")
		topic, prefix := "clients-kcat", "kcat"
		createTopic(t, c, topic)
		var in strings.Builder
		for i := 0; i < records; i++ {
			fmt.Fprintf(&in, "k%d:%s-%d\n", i, prefix, i)
		}
		run(t, 60*time.Second, []byte(in.String()), kcat, "-b", boot, "-t", topic, "-P", "-K:",
			"-X", "enable.idempotence=true", "-X", "linger.ms=5")
		out := run(t, 60*time.Second, nil, kcat, "-b", boot, "-t", topic, "-C", "-o", "beginning", "-e",
			"-c", fmt.Sprint(records), "-f", "%p %o %s\n", "-q")
		verifyExactlyOnce(t, prefix, records, parseLines(t, out))
	})

	// python produces then consumes with one of the Python client scripts
	// on topic clients-<name>, records tagged <name>.
	python := func(t *testing.T, name, scriptName string) {
		script := filepath.Join(clientsDir(t), scriptName)
		topic, prefix := "clients-"+name, name
		createTopic(t, c, topic)
		args := []string{"--bootstrap", boot, "--topic", topic, "--count", fmt.Sprint(records), "--prefix", prefix}
		out := run(t, 120*time.Second, nil, "/usr/bin/python3", append([]string{script, "produce"}, args...)...)
		if !strings.Contains(string(out), fmt.Sprintf("produced %d", records)) {
			t.Fatalf("%s producer: %s", name, out)
		}
		out = run(t, 120*time.Second, nil, "/usr/bin/python3", append([]string{script, "consume"}, args...)...)
		verifyExactlyOnce(t, prefix, records, parseLines(t, out))
	}

	t.Run("kafka-python", func(t *testing.T) {
		requirePython(t, "kafka", "python3-kafka")
		python(t, "kafka-python", "kafka_python_client.py")
	})

	t.Run("confluent-kafka", func(t *testing.T) {
		requirePython(t, "confluent_kafka", "python3-confluent-kafka")
		python(t, "confluent-kafka", "confluent_kafka_client.py")
	})

	t.Run("kafkajs", func(t *testing.T) {
		node := requireTool(t, "node", "apt-get install -y nodejs")
		dir := clientsDir(t)
		if err := fileExists(filepath.Join(dir, "node_modules", "kafkajs", "package.json")); err != nil {
			t.Fatalf("kafkajs is not installed in testdata/clients: run (cd testdata/clients && npm ci) or bin/klassik-install-deps.sh: %v", err)
		}
		topic, prefix := "clients-kafkajs", "kafkajs"
		createTopic(t, c, topic)
		out := run(t, 120*time.Second, nil, node, filepath.Join(dir, "kafkajs_client.js"), "produce", c.Bootstrap()[0], topic, fmt.Sprint(records), prefix)
		if !strings.Contains(string(out), fmt.Sprintf("produced %d", records)) {
			t.Fatalf("kafkajs producer: %s", out)
		}
		// kafkajs consumes only through a consumer group.
		out = run(t, 120*time.Second, nil, node, filepath.Join(dir, "kafkajs_client.js"), "consume", c.Bootstrap()[0], topic, fmt.Sprint(records), "kafkajs-clients")
		verifyExactlyOnce(t, prefix, records, parseLines(t, out))
	})

	t.Run("franz-go", func(t *testing.T) {
		topic, prefix := "clients-franz-go", "franz-go"
		createTopic(t, c, topic)
		// Idempotent with acks=all: franz-go's defaults.
		cl := c.Client(kgo.DefaultProduceTopic(topic))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var recs []*kgo.Record
		for i := 0; i < records; i++ {
			recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("franz-go produce: %v", err)
		}
		verifyExactlyOnce(t, prefix, records, consumeWithKgo(t, c, topic, records))
	})

	t.Run("sarama", func(t *testing.T) {
		topic, prefix := "clients-sarama", "sarama"
		createTopic(t, c, topic)
		saramaProduce(t, c, topic, prefix)
		verifyExactlyOnce(t, prefix, records, saramaConsume(t, c, topic))
	})

	t.Run("kafka-go", func(t *testing.T) {
		topic, prefix := "clients-kafka-go", "kafka-go"
		createTopic(t, c, topic)
		kafkaGoProduce(t, c, topic, prefix)
		verifyExactlyOnce(t, prefix, records, kafkaGoConsume(t, c, topic))
	})
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Retry.Max = 10
	cfg.Consumer.Return.Errors = true
	return cfg
}

func saramaProduce(t *testing.T, c *testcluster.Cluster, topic, prefix string) {
	t.Helper()
	p, err := sarama.NewSyncProducer(c.Bootstrap(), saramaConfig())
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer p.Close()
	const batch = 500
	for i := 0; i < records; i += batch {
		var msgs []*sarama.ProducerMessage
		for j := i; j < i+batch && j < records; j++ {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("k%d", j)), Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", prefix, j))})
		}
		if err := p.SendMessages(msgs); err != nil {
			t.Fatalf("sarama SendMessages: %v", err)
		}
	}
}

func saramaConsume(t *testing.T, c *testcluster.Cluster, topic string) []consumed {
	t.Helper()
	cons, err := sarama.NewConsumer(c.Bootstrap(), saramaConfig())
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer cons.Close()
	parts, err := cons.Partitions(topic)
	if err != nil {
		t.Fatalf("sarama partitions: %v", err)
	}
	var col collector
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan struct{})
	for _, p := range parts {
		pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("sarama ConsumePartition %d: %v", p, err)
		}
		go func() { // drains one partition consumer; ends when it is closed
			for m := range pc.Messages() {
				col.add(consumed{partition: m.Partition, offset: m.Offset, value: string(m.Value)})
			}
		}()
		go func() { // logs errors; ends when the partition consumer is closed
			for e := range pc.Errors() {
				t.Logf("sarama partition error: %v", e)
			}
		}()
		defer pc.Close()
	}
	go func() {
		defer close(done)
		testcluster.Poll(time.Until(deadline(ctx)), func() bool { return col.len() >= records })
	}()
	<-done
	if col.len() < records {
		t.Fatalf("sarama read %d of %d records", col.len(), records)
	}
	return col.all()
}

func kafkaGoProduce(t *testing.T, c *testcluster.Cluster, topic, prefix string) {
	t.Helper()
	w := &kafkago.Writer{
		Addr:         kafkago.TCP(c.Bootstrap()...),
		Topic:        topic,
		Balancer:     &kafkago.Hash{},
		RequiredAcks: kafkago.RequireAll,
		BatchSize:    500,
		BatchTimeout: 5 * time.Millisecond,
		MaxAttempts:  10,
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const batch = 500
	for i := 0; i < records; i += batch {
		var msgs []kafkago.Message
		for j := i; j < i+batch && j < records; j++ {
			msgs = append(msgs, kafkago.Message{Key: []byte(fmt.Sprintf("k%d", j)), Value: []byte(fmt.Sprintf("%s-%d", prefix, j))})
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatalf("kafka-go WriteMessages: %v", err)
		}
	}
}

func kafkaGoConsume(t *testing.T, c *testcluster.Cluster, topic string) []consumed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := kafkago.DialContext(ctx, "tcp", c.Bootstrap()[0])
	if err != nil {
		t.Fatalf("kafka-go dial: %v", err)
	}
	parts, err := conn.ReadPartitions(topic)
	conn.Close()
	if err != nil {
		t.Fatalf("kafka-go ReadPartitions: %v", err)
	}
	var recs []consumed
	for _, p := range parts {
		r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: c.Bootstrap(), Topic: topic, Partition: p.ID, MaxWait: 200 * time.Millisecond})
		if err := r.SetOffset(kafkago.FirstOffset); err != nil {
			t.Fatalf("kafka-go SetOffset: %v", err)
		}
		// Read up to the partition's end offset, as observed now.
		lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
		end, err := r.ReadLag(lctx)
		lcancel()
		if err != nil {
			r.Close()
			t.Fatalf("kafka-go ReadLag partition %d: %v", p.ID, err)
		}
		for i := int64(0); i < end; i++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("kafka-go partition %d after %d records: %v", p.ID, i, err)
			}
			recs = append(recs, consumed{partition: int32(m.Partition), offset: m.Offset, value: string(m.Value)})
		}
		r.Close()
	}
	return recs
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
