package replica

import (
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestSaramaProduceConsume exercises older protocol versions (sarama's
// V2_0_0_0 versions: pre-flexible Produce and Fetch without sessions, ListOffsets for
// OffsetOldest/OffsetNewest) against the same manager.
func TestSaramaProduceConsume(t *testing.T) {
	const topic = "legacy"
	h, seed := startE2E(t, topic, 1)

	cfg := sarama.NewConfig()
	// Pin an old protocol generation and skip ApiVersions negotiation so
	// the pre-flexible versions are exercised.
	cfg.Version = sarama.V2_0_0_0
	cfg.ApiVersionsRequest = false
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1

	prod, err := sarama.NewSyncProducer([]string{seed}, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer prod.Close()
	const n = 50
	for i := 0; i < n; i++ {
		p, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(strconv.Itoa(i))})
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if p != 0 || off != int64(i) {
			t.Fatalf("send %d landed at %d/%d", i, p, off)
		}
	}

	client, err := sarama.NewClient([]string{seed}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if newest, err := client.GetOffset(topic, 0, sarama.OffsetNewest); err != nil || newest != n {
		t.Fatalf("OffsetNewest %d %v", newest, err)
	}
	if oldest, err := client.GetOffset(topic, 0, sarama.OffsetOldest); err != nil || oldest != 0 {
		t.Fatalf("OffsetOldest %d %v", oldest, err)
	}

	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	timeout := time.After(30 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case msg := <-pc.Messages():
			if msg.Offset != int64(i) || string(msg.Value) != strconv.Itoa(i) {
				t.Fatalf("message %d: offset %d value %q", i, msg.Offset, msg.Value)
			}
		case err := <-pc.Errors():
			t.Fatalf("consume: %v", err)
		case <-timeout:
			t.Fatalf("consumed %d of %d", i, n)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxFetchVersion >= 12 || h.maxFetchVersion < 4 {
		t.Errorf("sarama used Fetch v%d; expected an older version", h.maxFetchVersion)
	}
}
