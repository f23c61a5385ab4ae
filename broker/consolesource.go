package broker

// The web console's view of this broker (console.Source): ZooKeeper reads
// through the broker's session, the replica manager's partitions, the log
// manager's segments, the group coordinator's groups and the controller's
// history. It also publishes the console's URL in /klassik/console/<id>,
// an ephemeral znode of Klassik's own (Kafka's /brokers/ids JSON is left
// as it is), so that other brokers' consoles can ask this one for what
// only it knows.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/console"
	"github.com/klassik/klassik/controller"
)

// consoleZNode is the directory of the published console URLs.
const consoleZNode = "/klassik/console"

// clusterCacheTTL lets the page's parallel polls share one ZooKeeper read.
const clusterCacheTTL = 250 * time.Millisecond

type consoleSource struct {
	b    *Broker
	read func() (console.Cluster, error) // readCluster; a fake in tests
	now  func() time.Time

	// mu guards the following.
	mu        sync.Mutex
	cached    console.Cluster
	cachedAt  time.Time
	published []byte // the /klassik/console/<id> content, nil before PublishConsoleURL
	stopNew   func()
	// The failed cluster reads since the last good one: the reason last
	// logged ("" while reads work), how many, since when. Every open page
	// polls every 500 ms, so an outage is logged when it starts, when its
	// reason changes and when it ends, not at each poll.
	failReason string
	failReads  int
	failSince  time.Time
}

func newConsoleSource(b *Broker) *consoleSource {
	s := &consoleSource{b: b, now: time.Now}
	s.read = s.readCluster
	return s
}

var _ console.Source = (*consoleSource)(nil)

func (s *consoleSource) BrokerID() int32 { return s.b.brokerID }

type consoleNode struct {
	Version int    `json:"version"`
	URL     string `json:"url"`
}

// PublishConsoleURL writes this broker's console URL (e.g.
// http://127.0.0.1:8081, from the bound klassik.http.listener) into its
// /klassik/console/<id> ephemeral znode, again after every new ZooKeeper
// session. A listener bound to a wildcard address publishes the host of
// the broker's first advertised endpoint instead.
func (b *Broker) PublishConsoleURL(addr net.Addr) error {
	if b.consoleSrc == nil || b.zk == nil {
		return errors.New("broker: not started")
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return fmt.Errorf("broker: console address %v is not TCP", addr)
	}
	host := tcp.IP.String()
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		host = "localhost"
		if len(b.regInfo.Endpoints) > 0 && b.regInfo.Endpoints[0].Host != "" {
			host = b.regInfo.Endpoints[0].Host
		}
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, strconv.Itoa(tcp.Port))}
	data, err := json.Marshal(consoleNode{Version: 1, URL: u.String()})
	if err != nil {
		return err
	}
	s := b.consoleSrc
	s.mu.Lock()
	s.published = data
	if s.stopNew == nil {
		s.stopNew = b.zk.OnNewSession(func() {
			if err := s.writeNode(); err != nil {
				b.logger.Warn("re-publishing the console URL", "err", err)
			}
		})
	}
	s.mu.Unlock()
	return s.writeNode()
}

func (s *consoleSource) writeNode() error {
	s.mu.Lock()
	data := s.published
	s.mu.Unlock()
	if data == nil {
		return nil
	}
	p := consoleZNode + "/" + strconv.Itoa(int(s.b.brokerID))
	// A node left by this broker's previous session disappears with it;
	// one still present is ours from this session (a retry) or stale:
	// replace it.
	if err := s.b.zk.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("broker: replacing %s: %w", p, err)
	}
	if _, err := s.b.zk.CreateRecursive(p, data, zk.FlagEphemeral); err != nil {
		return fmt.Errorf("broker: creating %s: %w", p, err)
	}
	return nil
}

func (s *consoleSource) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopNew != nil {
		s.stopNew()
		s.stopNew = nil
	}
}

func (s *consoleSource) Cluster(ctx context.Context) (console.Cluster, error) {
	s.mu.Lock()
	if !s.cachedAt.IsZero() && s.now().Sub(s.cachedAt) < clusterCacheTTL {
		c := s.cached
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()
	c, err := s.read()
	if err != nil {
		// A failed read (ZooKeeper busy or away, a node changing under
		// the read) shows the last good view, marked stale with the
		// reason, rather than no view at all.
		// Logged under mu so that the lines of concurrent polls come in
		// the order of the state they report.
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.failReason == "" {
			s.failSince = s.now()
		}
		s.failReads++
		if reason := err.Error(); reason != s.failReason {
			s.failReason = reason
			s.b.logger.Warn("console: reading the cluster from ZooKeeper failed; the console shows the last good view, marked stale (logged again when the reason changes and when reads work again)",
				"err", err, "failed_reads", s.failReads)
		}
		if s.cachedAt.IsZero() {
			return console.Cluster{}, err
		}
		c := s.cached
		c.Stale = err.Error()
		return c, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cached, s.cachedAt = c, s.now()
	if s.failReason != "" {
		s.b.logger.Info("console: reading the cluster from ZooKeeper works again",
			"failed_reads", s.failReads, "failing_for", s.cachedAt.Sub(s.failSince).Round(time.Millisecond))
		s.failReason, s.failReads = "", 0
	}
	return c, nil
}

func (s *consoleSource) readCluster() (console.Cluster, error) {
	z := s.b.zk
	c := console.Cluster{ServedBy: s.b.brokerID, ClusterID: s.b.clusterID, Controller: -1, Time: time.Now().UTC()}
	id, ok, err := z.GetController()
	if err != nil {
		return c, fmt.Errorf("reading /controller: %w", err)
	}
	if ok {
		c.Controller = id
	}
	if epoch, _, ok, err := z.GetControllerEpoch(); err != nil {
		return c, fmt.Errorf("reading /controller_epoch: %w", err)
	} else if ok {
		c.ControllerEpoch = epoch
	}
	infos, err := z.GetAllBrokers()
	if err != nil {
		return c, fmt.Errorf("reading /brokers/ids: %w", err)
	}
	for _, bi := range infos {
		b := console.Broker{ID: bi.ID, Rack: bi.Rack, Endpoints: []console.Endpoint{}}
		for _, e := range bi.Endpoints {
			b.Endpoints = append(b.Endpoints, console.Endpoint{Listener: e.ListenerName, Host: e.Host, Port: e.Port, SecurityProtocol: e.SecurityProtocol})
		}
		if data, _, err := z.Get(consoleZNode + "/" + strconv.Itoa(int(bi.ID))); err == nil {
			var n consoleNode
			if json.Unmarshal(data, &n) == nil {
				b.Console = n.URL
			}
		}
		c.Brokers = append(c.Brokers, b)
	}
	sort.Slice(c.Brokers, func(i, j int) bool { return c.Brokers[i].ID < c.Brokers[j].ID })
	topics, err := z.GetAllTopics()
	if err != nil {
		return c, fmt.Errorf("reading /brokers/topics: %w", err)
	}
	sort.Strings(topics)
	var tps []common.TopicPartition
	n := 0
	for _, t := range topics {
		a, _, err := z.GetTopicAssignment(t)
		if err != nil {
			continue // deleted meanwhile, or undecodable: shown on the next poll
		}
		top := console.Topic{Name: t}
		for p, reps := range a.Partitions {
			if n >= console.MaxPartitions {
				c.Truncated = true
				break
			}
			n++
			top.Partitions = append(top.Partitions, console.Partition{Partition: p, Replicas: reps, Leader: -1, LeaderEpoch: -1, ISR: []int32{}})
			tps = append(tps, common.TopicPartition{Topic: t, Partition: p})
		}
		sort.Slice(top.Partitions, func(i, j int) bool { return top.Partitions[i].Partition < top.Partitions[j].Partition })
		c.Topics = append(c.Topics, top)
	}
	states, err := z.GetPartitionStates(tps)
	if err != nil {
		return c, fmt.Errorf("reading partition states: %w", err)
	}
	for ti := range c.Topics {
		for pi := range c.Topics[ti].Partitions {
			p := &c.Topics[ti].Partitions[pi]
			if st, ok := states[common.TopicPartition{Topic: c.Topics[ti].Name, Partition: p.Partition}]; ok {
				p.HasState, p.Leader, p.LeaderEpoch, p.ISR, p.ControllerEpoch = true, st.Leader, st.LeaderEpoch, st.ISR, st.ControllerEpoch
			}
		}
	}
	return c, nil
}

func (s *consoleSource) LocalReplicas() []console.Replica {
	parts := s.b.replicas.Partitions()
	out := make([]console.Replica, 0, len(parts))
	for _, p := range parts {
		if len(out) >= console.MaxPartitions {
			break
		}
		st := p.State()
		if st.LogEndOffset < 0 {
			continue // no local log (yet)
		}
		tp := p.TopicPartition()
		out = append(out, console.Replica{Broker: s.b.brokerID, Topic: tp.Topic, Partition: tp.Partition, IsLeader: st.IsLeader,
			Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ISR: st.ISR,
			LogStartOffset: st.LogStartOffset, LogEndOffset: st.LogEndOffset, HighWatermark: st.HighWatermark})
	}
	return out
}

func (s *consoleSource) History() controller.HistorySnapshot { return s.b.ctrl.History() }

func (s *consoleSource) LocalGroups() []console.Group {
	snaps := s.b.groups.Snapshots()
	out := make([]console.Group, 0, len(snaps))
	for _, g := range snaps {
		cg := console.Group{Group: g.Group, Coordinator: s.b.brokerID, State: g.State.String(), ProtocolType: g.ProtocolType,
			Protocol: g.Protocol, Generation: g.Generation, Leader: g.Leader, Members: []console.Member{}, Offsets: []console.Offset{}}
		for _, m := range g.Members {
			cm := console.Member{ID: m.ID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assignment: map[string][]int32{}}
			if m.InstanceID != nil {
				cm.InstanceID = *m.InstanceID
			}
			if g.ProtocolType == "consumer" && len(m.Assignment) > 0 {
				var a kmsg.ConsumerMemberAssignment
				if a.ReadFrom(m.Assignment) == nil {
					for _, t := range a.Topics {
						cm.Assignment[t.Topic] = t.Partitions
					}
				}
			}
			cg.Members = append(cg.Members, cm)
		}
		for tp, off := range g.Offsets {
			cg.Offsets = append(cg.Offsets, console.Offset{Topic: tp.Topic, Partition: tp.Partition, Committed: off, HighWatermark: -1, Lag: -1})
		}
		sort.Slice(cg.Offsets, func(i, j int) bool {
			if cg.Offsets[i].Topic != cg.Offsets[j].Topic {
				return cg.Offsets[i].Topic < cg.Offsets[j].Topic
			}
			return cg.Offsets[i].Partition < cg.Offsets[j].Partition
		})
		out = append(out, cg)
	}
	return out
}

func (s *consoleSource) Segments(topic string, partition int32) (console.Segments, bool) {
	l, ok := s.b.logs.GetLog(common.TopicPartition{Topic: topic, Partition: partition})
	if !ok {
		return console.Segments{}, false
	}
	out := console.Segments{Broker: s.b.brokerID, Topic: topic, Partition: partition, Dir: l.Dir(),
		LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset(), HighWatermark: l.HighWatermark()}
	infos := l.SegmentInfos(console.MaxSegments, console.MaxIndexEntries)
	out.Truncated = l.NumSegments() > len(infos)
	for _, si := range infos {
		seg := console.Segment{BaseOffset: si.BaseOffset, Size: si.Size, IndexEntries: si.IndexEntries, Index: []console.IndexEntry{}}
		if si.IndexEntries > len(si.Index) {
			out.Truncated = true
		}
		for _, e := range si.Index {
			seg.Index = append(seg.Index, console.IndexEntry{Offset: e.Offset, Position: e.Position})
		}
		out.Segments = append(out.Segments, seg)
	}
	return out, true
}
