package main

// The timeline: what the tool did (faults, heals, restarts), what the
// clients saw (rebalances, failed sends) and what the cluster did, read
// from ZooKeeper by polling /controller, /controller_epoch, /brokers/ids
// and the topic's /brokers/topics/<topic>/partitions/<n>/state. Printed
// sorted by time, or written as JSON (--timeline-json).

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// Event is one line of the timeline.
type Event struct {
	Time   time.Time `json:"time"`
	Source string    `json:"source"` // chaos, cluster, producer, consumer
	What   string    `json:"what"`
}

// Timeline collects events; safe for concurrent use.
type Timeline struct {
	mu     sync.Mutex
	events []Event
	start  time.Time
	live   io.Writer // if set, every event is also written here as it comes (--live)
}

// Add records an event now.
func (t *Timeline) Add(source, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := Event{Time: time.Now(), Source: source, What: fmt.Sprintf(format, args...)}
	t.events = append(t.events, e)
	if t.live != nil {
		t.printEvent(t.live, e)
	}
}

func (t *Timeline) printEvent(w io.Writer, e Event) {
	fmt.Fprintf(w, "%s +%8.3fs %-8s %s\n", e.Time.UTC().Format("15:04:05.000"), e.Time.Sub(t.start).Seconds(), e.Source, e.What)
}

// Events returns the events sorted by time.
func (t *Timeline) Events() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]Event(nil), t.events...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// Print writes the timeline, one event per line, with the time since the
// start.
func (t *Timeline) Print(w io.Writer) {
	for _, e := range t.Events() {
		t.printEvent(w, e)
	}
}

// WriteJSON writes the timeline as a JSON array to file.
func (t *Timeline) WriteJSON(file string) error {
	data, err := json.MarshalIndent(t.Events(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// clusterState is what the watcher last read.
type clusterState struct {
	controller      int32 // -1: none
	controllerEpoch int32
	brokers         string
	parts           map[int32]zkpaths.LeaderAndIsr
}

// watchCluster polls ZooKeeper every interval until stop is closed,
// adding a cluster event for each change it sees.
func watchCluster(zk *zkclient.Client, topic string, partitions int32, interval time.Duration, tl *Timeline, stop <-chan struct{}) {
	prev := clusterState{controller: -2, controllerEpoch: -1, parts: map[int32]zkpaths.LeaderAndIsr{}}
	failing := false
	for {
		cur, err := readCluster(zk, topic, partitions)
		if err != nil {
			if !failing {
				tl.Add("cluster", "reading ZooKeeper failed: %v", err)
			}
			failing = true
		} else {
			if failing {
				tl.Add("cluster", "reading ZooKeeper again")
			}
			failing = false
			diffCluster(prev, cur, tl)
			prev = cur
		}
		select {
		case <-stop:
			return
		case <-time.After(interval):
		}
	}
}

func readCluster(zk *zkclient.Client, topic string, partitions int32) (clusterState, error) {
	s := clusterState{controller: -1, parts: map[int32]zkpaths.LeaderAndIsr{}}
	id, ok, err := zk.GetController()
	if err != nil {
		return s, err
	}
	if ok {
		s.controller = id
	}
	epoch, _, _, err := zk.GetControllerEpoch()
	if err != nil {
		return s, err
	}
	s.controllerEpoch = epoch
	ids, err := zk.GetBrokerIDs()
	if err != nil {
		return s, err
	}
	s.brokers = fmt.Sprint(ids)
	var tps []common.TopicPartition
	for p := int32(0); p < partitions; p++ {
		tps = append(tps, common.TopicPartition{Topic: topic, Partition: p})
	}
	states, err := zk.GetPartitionStates(tps)
	if err != nil {
		return s, err
	}
	for tp, st := range states {
		s.parts[tp.Partition] = st
	}
	return s, nil
}

// diffCluster adds an event per difference between two readings.
func diffCluster(prev, cur clusterState, tl *Timeline) {
	if cur.controller != prev.controller {
		if cur.controller < 0 {
			tl.Add("cluster", "no controller (/controller absent)")
		} else {
			tl.Add("cluster", "controller is broker %d", cur.controller)
		}
	}
	if cur.controllerEpoch != prev.controllerEpoch {
		tl.Add("cluster", "controller epoch %d", cur.controllerEpoch)
	}
	if cur.brokers != prev.brokers {
		tl.Add("cluster", "registered brokers %s", cur.brokers)
	}
	var ps []int32
	for p := range cur.parts {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	for _, p := range ps {
		st, old := cur.parts[p], prev.parts[p]
		var changes []string
		if st.Leader != old.Leader || st.LeaderEpoch != old.LeaderEpoch {
			changes = append(changes, fmt.Sprintf("leader %d (epoch %d)", st.Leader, st.LeaderEpoch))
		}
		if fmt.Sprint(st.ISR) != fmt.Sprint(old.ISR) {
			changes = append(changes, fmt.Sprintf("isr %v", st.ISR))
		}
		if len(changes) > 0 {
			tl.Add("cluster", "partition %d: %s (controller epoch %d, zk version %d)", p, strings.Join(changes, ", "), st.ControllerEpoch, st.ZkVersion)
		}
	}
}
