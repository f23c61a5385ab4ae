package main

import "github.com/twmb/franz-go/pkg/kgo"

func kgoRecord(topic, value string) *kgo.Record {
	return &kgo.Record{Topic: topic, Value: []byte(value)}
}
