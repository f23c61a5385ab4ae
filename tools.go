//go:build tools

// This file pins modules that the test suites and benchmarks import, so that
// `go mod tidy` keeps them while packages are being written.
package klassik

import (
	_ "github.com/IBM/sarama"
	_ "github.com/go-zookeeper/zk"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/pierrec/lz4/v4"
	_ "github.com/rcrowley/go-metrics"
	_ "github.com/segmentio/kafka-go"
	_ "github.com/twmb/franz-go/pkg/kadm"
	_ "github.com/twmb/franz-go/pkg/kerr"
	_ "github.com/twmb/franz-go/pkg/kfake"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/kmsg"
	_ "gopkg.in/yaml.v3"
)
