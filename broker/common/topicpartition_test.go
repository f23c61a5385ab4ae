package common

import (
	"slices"
	"testing"
)

func TestTopicPartitionStringAndOrder(t *testing.T) {
	if got := (TopicPartition{"orders", 12}).String(); got != "orders-12" {
		t.Fatalf("String = %q, want Kafka's directory name orders-12", got)
	}
	tps := []TopicPartition{{"b", 0}, {"a", 10}, {"a", 2}, {"a-1", 0}}
	slices.SortFunc(tps, TopicPartition.Compare)
	want := []TopicPartition{{"a", 2}, {"a", 10}, {"a-1", 0}, {"b", 0}}
	if !slices.Equal(tps, want) {
		t.Fatalf("sorted %v, want %v (by topic, then partition as a number)", tps, want)
	}
}
