package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkSource is the classic consumer (--zookeeper): a
// clitools.ZKConsumer on its own ZooKeeper session.
type zkSource struct {
	zk          *zkclient.Client
	c           *clitools.ZKConsumer
	group       string
	groupPassed bool
}

func newZKSource(o *options, stderr io.Writer) (*zkSource, error) {
	group := o.group
	if !o.groupPassed {
		group = "console-consumer-" + strconv.Itoa(rand.IntN(100000))
	}
	cfg := clitools.ZKConsumerDefaults(group, o.topic)
	if o.fromBeginning {
		cfg.AutoOffsetReset = "smallest"
	}
	if err := security.RequirePlaintext(o.consumerProps, "the old consumer (--zookeeper)"); err != nil {
		return nil, err
	}
	if err := cfg.ApplyProperties(o.consumerProps); err != nil {
		return nil, err
	}
	session, err := clitools.Millis(o.consumerProps, "zookeeper.session.timeout.ms", 6*time.Second)
	if err != nil {
		return nil, err
	}
	sec, err := clitools.ZooKeeperOptions("")
	if err != nil {
		return nil, err
	}
	zkc, err := zkclient.Connect(o.zookeeper, session, append(sec, zkclient.WithConnectTimeout(6*time.Second))...)
	if err != nil {
		return nil, err
	}
	if o.deleteOffsets {
		if err := zkc.DeleteRecursive(zkpaths.ConsumerGroupPath(group)); err != nil {
			zkc.Close()
			return nil, err
		}
	}
	// Starting "from the beginning" would be silently ignored for a group
	// that already committed offsets, so Kafka refuses it.
	if o.fromBeginning && o.groupPassed {
		ok, _, err := zkc.Exists(zkpaths.ConsumerGroupPath(group) + "/offsets")
		if err != nil {
			zkc.Close()
			return nil, err
		}
		if ok {
			zkc.Close()
			return nil, &exitError{fmt.Sprintf("Found previous offset information for this group %s. Please use --delete-consumer-offsets to delete previous offsets metadata", group)}
		}
	}
	c, err := clitools.StartZKConsumer(zkc, cfg)
	if err != nil {
		zkc.Close()
		return nil, err
	}
	return &zkSource{zk: zkc, c: c, group: group, groupPassed: o.groupPassed}, nil
}

func (s *zkSource) Next(ctx context.Context, timeout time.Duration) (clitools.Message, error) {
	return s.c.Next(ctx, timeout)
}

func (s *zkSource) Close() error {
	err := s.c.Close()
	if !s.groupPassed {
		// A generated group is not meant to be reused: remove its znodes.
		if derr := s.zk.DeleteRecursive(zkpaths.ConsumerGroupPath(s.group)); derr != nil {
			err = errors.Join(err, derr)
		}
	}
	s.zk.Close()
	return err
}
