package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkService reads and deletes groups of classic consumers, stored under
// /consumers in ZooKeeper, as the pre-2.0 ZkConsumerGroupService did. Log
// end offsets come from the partition leaders, found through /brokers/ids.
type zkService struct {
	o              *options
	zk             *zkclient.Client
	stdout, stderr io.Writer
}

func newZKService(o *options, stdout, stderr io.Writer) (*zkService, error) {
	// Kafka's tool uses a 30 s session and connection timeout.
	sec, err := clitools.ZooKeeperOptions("")
	if err != nil {
		return nil, err
	}
	c, err := zkclient.Connect(o.zookeeper, 30*time.Second, append(sec, zkclient.WithConnectTimeout(30*time.Second))...)
	if err != nil {
		return nil, err
	}
	return &zkService{o: o, zk: c, stdout: stdout, stderr: stderr}, nil
}

func (s *zkService) close() { s.zk.Close() }

// zkPrintError is the old tool's printError (no leading blank line).
func (s *zkService) printError(msg string) { fmt.Fprintf(s.stdout, "Error: %s\n", msg) }

func (s *zkService) children(p string) ([]string, error) {
	kids, err := s.zk.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	sort.Strings(kids)
	return kids, err
}

func (s *zkService) list(context.Context) error {
	groups, err := s.children(zkpaths.ConsumersPath)
	if err != nil {
		return err
	}
	for _, g := range groups {
		fmt.Fprintln(s.stdout, g)
	}
	return nil
}

func (s *zkService) delete(context.Context) error {
	for _, g := range s.o.groups {
		ok, _, err := s.zk.Exists(zkpaths.ConsumerGroupPath(g))
		if err != nil {
			return err
		}
		if !ok {
			s.printError(fmt.Sprintf("Delete for group '%s' failed because group does not exist.", g))
			continue
		}
		ids, err := s.children(zkpaths.ConsumerIDsPath(g))
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			s.printError(fmt.Sprintf("Delete for group '%s' failed because its consumers are still active.", g))
			continue
		}
		if err := s.zk.DeleteRecursive(zkpaths.ConsumerGroupPath(g)); err != nil {
			return err
		}
		fmt.Fprintf(s.stdout, "Deleted all consumer group information for group '%s' in zookeeper.\n", g)
	}
	return nil
}

func (s *zkService) deleteOffsets(context.Context) error {
	return errors.New("--delete-offsets is not supported with --zookeeper")
}

func (s *zkService) reset(context.Context) error {
	return errors.New("--reset-offsets is not supported with --zookeeper")
}

// describe prints, for each group, every partition of the topics the group
// owns (owner and committed offset from ZooKeeper, log end offset from the
// leader), then the registered consumers that own nothing.
func (s *zkService) describe(ctx context.Context) error {
	all, err := s.children(zkpaths.ConsumersPath)
	if err != nil {
		return err
	}
	for _, g := range s.o.groups {
		if !contains(all, g) {
			s.printError(fmt.Sprintf("The consumer group '%s' does not exist.", g))
			continue
		}
		rows, err := s.groupRows(ctx, g)
		if err != nil {
			return err
		}
		printZKAssignment(s.stdout, rows)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *zkService) groupRows(ctx context.Context, g string) ([]assignmentRow, error) {
	topics, err := s.children(zkpaths.ConsumerGroupPath(g) + "/owners")
	if err != nil {
		return nil, err
	}
	consumers, err := s.children(zkpaths.ConsumerIDsPath(g))
	if err != nil {
		return nil, err
	}
	ends, err := s.logEndOffsets(ctx, topics)
	if err != nil {
		return nil, err
	}
	var rows []assignmentRow
	owning := map[string]int{}
	for _, t := range topics {
		parts, ok, err := clitools.PartitionIDs(s.zk, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, p := range parts {
			owner := missing
			data, _, err := s.zk.Get(zkpaths.ConsumerOwnerPath(g, t, p))
			switch {
			case err == nil:
				// The owner node holds "<consumerId>-<thread>".
				o := string(data)
				if i := strings.LastIndex(o, "-"); i >= 0 {
					o = o[:i]
				}
				owner = o
				owning[o]++
			case !errors.Is(err, zk.ErrNoNode):
				return nil, err
			}
			off, ok, err := s.zk.GetConsumerOffset(g, t, p)
			if err != nil {
				return nil, err
			}
			var offp *int64
			if ok {
				offp = i64(off)
			} else {
				s.printError(fmt.Sprintf("Could not fetch offset from zookeeper for group '%s' partition '%s-%d' due to missing offset data in zookeeper.", g, t, p))
			}
			end := lookup(ends, t, p)
			rows = append(rows, assignmentRow{group: g, topic: str(t), partition: i32(p), offset: offp, logEndOffset: end,
				lag: lag(offp, end), consumerID: str(owner)})
		}
	}
	for _, c := range consumers {
		if owning[c] == 0 {
			rows = append(rows, assignmentRow{group: g, consumerID: str(c)})
		}
	}
	return rows, nil
}

// logEndOffsets asks the brokers registered in ZooKeeper for the latest
// offsets of the topics.
func (s *zkService) logEndOffsets(ctx context.Context, topics []string) (kadm.ListedOffsets, error) {
	if len(topics) == 0 {
		return kadm.ListedOffsets{}, nil
	}
	brokers, err := s.zk.GetAllBrokers()
	if err != nil {
		return nil, err
	}
	seeds := clitools.BrokerBootstrap(brokers)
	if len(seeds) == 0 {
		return kadm.ListedOffsets{}, nil // every LOG-END-OFFSET prints "-"
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("ConsumerGroupCommand"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	c, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	lo, err := kadm.NewClient(cl).ListEndOffsets(c, topics...)
	if err != nil {
		return nil, errors.New(javaError(err))
	}
	return lo, nil
}
