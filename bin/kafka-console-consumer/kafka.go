package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/config"
)

// kafkaSource is the --bootstrap-server consumer: a consumer group member
// subscribed to --topic/--whitelist, or (with --partition) a group-less
// consumer assigned one partition, as Kafka's ConsoleConsumer does.
type kafkaSource struct {
	cl         *kgo.Client
	autoCommit bool
	buf        []*kgo.Record
}

func newKafkaSource(o *options) (*kafkaSource, error) {
	props := o.consumerProps
	clientID := props["client.id"]
	if clientID == "" {
		clientID = "consumer-console"
	}
	opts := []kgo.Opt{kgo.SeedBrokers(config.SplitList(o.bootstrap)...), kgo.ClientID(clientID),
		kgo.FetchMaxWait(500 * time.Millisecond)}
	if o.readCommitted || props["isolation.level"] == "read_committed" {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	// auto.offset.reset: --from-beginning means earliest unless the
	// properties say otherwise; the default is latest.
	reset := kgo.NewOffset().AtEnd()
	if o.fromBeginning {
		reset = kgo.NewOffset().AtStart()
	}
	switch props["auto.offset.reset"] {
	case "earliest":
		reset = kgo.NewOffset().AtStart()
	case "latest":
		reset = kgo.NewOffset().AtEnd()
	case "", "none":
	default:
		return nil, errors.New("Invalid value " + props["auto.offset.reset"] + " for configuration auto.offset.reset: String must be one of: latest, earliest, none")
	}
	opts = append(opts, kgo.ConsumeResetOffset(reset))
	s := &kafkaSource{}
	if o.hasPartition {
		start := reset
		switch o.offset {
		case "earliest":
			start = kgo.NewOffset().AtStart()
		case "latest":
			start = kgo.NewOffset().AtEnd()
		case "":
		default:
			n, _ := strconv.ParseInt(o.offset, 10, 64)
			start = kgo.NewOffset().At(n)
		}
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.topic: {o.partition: start}}))
	} else {
		group := o.group
		autoCommit := true
		if !o.groupPassed {
			// An auto-generated group is not meant to be reused, so its
			// offsets are not committed unless asked for.
			group = "console-consumer-" + strconv.Itoa(rand.IntN(100000))
			autoCommit = false
		}
		var err error
		if autoCommit, err = clitools.Bool(props, "enable.auto.commit", autoCommit); err != nil {
			return nil, err
		}
		interval, err := clitools.Millis(props, "auto.commit.interval.ms", 5*time.Second)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.ConsumerGroup(group))
		if o.whitelist != "" {
			opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(o.whitelist))
		} else {
			opts = append(opts, kgo.ConsumeTopics(o.topic))
		}
		if autoCommit {
			// Commit what was printed, not what was fetched.
			opts = append(opts, kgo.AutoCommitMarks(), kgo.AutoCommitInterval(interval))
		} else {
			opts = append(opts, kgo.DisableAutoCommit())
		}
		s.autoCommit = autoCommit
	}
	secOpts, err := security.Opts(props)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, secOpts...)...)
	if err != nil {
		return nil, err
	}
	s.cl = cl
	return s, nil
}

func (s *kafkaSource) Next(ctx context.Context, timeout time.Duration) (clitools.Message, error) {
	deadline := time.Time{}
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	for len(s.buf) == 0 {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if !deadline.IsZero() {
			pctx, cancel = context.WithDeadline(ctx, deadline)
		}
		fs := s.cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return clitools.Message{}, ctx.Err()
		}
		if fs.IsClientClosed() {
			return clitools.Message{}, clitools.ErrConsumerClosed
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			// The Java consumer retries retriable errors (a coordinator
			// still loading, a leader moving) without surfacing them.
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || kerr.IsRetriable(err) ||
				errors.Is(err, kerr.UnknownTopicOrPartition) {
				return
			}
			if ferr == nil {
				ferr = err
			}
		})
		s.buf = append(s.buf, fs.Records()...)
		if len(s.buf) == 0 {
			if ferr != nil {
				return clitools.Message{}, ferr
			}
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return clitools.Message{}, clitools.ErrConsumerTimeout
			}
		}
	}
	r := s.buf[0]
	s.buf = s.buf[1:]
	if s.autoCommit {
		s.cl.MarkCommitRecords(r)
	}
	return clitools.MessageFromRecord(r), nil
}

func (s *kafkaSource) Close() error {
	var err error
	if s.autoCommit {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.cl.CommitMarkedOffsets(ctx)
		cancel()
	}
	s.cl.Close()
	return err
}
