package main

// The cluster part of the timeline, from ZooKeeper watches: /controller,
// /controller_epoch, the children of /brokers/ids and the topic's
// /brokers/topics/<topic>/partitions/<n>/state, each followed by a
// goroutine of its own that reads the znode with a watch, reports what
// changed since its last read, and waits for the watch to fire.
//
// A ZooKeeper watch fires once, and the next read sets the next one, so a
// second change made before that read is not seen by itself. It is still
// not lost: every write bumps the znode's version (a children change, its
// cversion) and a znode deleted and created again has a new czxid, so the
// reader compares those with its last read and reports how many changes it
// did not see, with the state they left. A broker's registration is
// compared by its czxid, which is its broker epoch: a broker whose session
// expired and that registered again shows up even when /brokers/ids lists
// the same ids before and after.
//
// The watcher has a ZooKeeper session of its own (go-zookeeper, which
// reconnects by itself and sets its watches again on a new connection) and
// reports that session's losses and expiries too: they are the tool's view
// of the ensemble. It runs 4 + partitions goroutines, all of which end
// when stop is called.

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// znode is one read of a watched znode.
type znode struct {
	exists   bool
	data     []byte
	stat     zk.Stat
	children map[string]int64 // for a children watch: child name -> its czxid
}

// clusterWatcher follows the cluster's state in ZooKeeper.
type clusterWatcher struct {
	conn   *zk.Conn
	chroot string
	tl     *Timeline
	stop   chan struct{}
	wg     sync.WaitGroup
	ready  sync.WaitGroup // each node watcher's first read

	epochs map[int]int64 // each broker's last broker epoch seen (the brokers goroutine's)
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// watchCluster starts watching connect's cluster for topic's partitions and
// waits (up to 15 s) until each watched znode has been read once.
func watchCluster(connect string, topic string, partitions int32, tl *Timeline) (*clusterWatcher, error) {
	servers, chroot, err := zkclient.ParseConnectString(connect)
	if err != nil {
		return nil, err
	}
	conn, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		return nil, err
	}
	w := &clusterWatcher{conn: conn, chroot: chroot, tl: tl, stop: make(chan struct{}), epochs: map[int]int64{}}
	w.wg.Add(1)
	go w.session(events)
	w.node(zkpaths.ControllerPath, false, w.controller)
	w.node(zkpaths.ControllerEpochPath, false, w.controllerEpoch)
	w.node(zkpaths.BrokerIDsPath, true, w.brokers)
	for p := int32(0); p < partitions; p++ {
		p := p
		w.node(zkpaths.PartitionStatePath(topic, p), false, func(prev, cur znode, first bool) {
			w.partition(p, prev, cur, first)
		})
	}
	read := make(chan struct{})
	go func() { // ends when every watcher has read once or stopped
		w.ready.Wait()
		close(read)
	}()
	select {
	case <-read:
	case <-time.After(15 * time.Second):
		tl.Add("cluster", "ZooKeeper: not every watched znode could be read within 15 s; watching on")
	}
	return w, nil
}

// Stop ends every goroutine of the watcher and closes its session.
func (w *clusterWatcher) Stop() {
	close(w.stop)
	w.conn.Close()
	w.wg.Wait()
}

// session reports the watcher's own session: connection losses (the
// session may survive them), expiries and new sessions.
func (w *clusterWatcher) session(events <-chan zk.Event) {
	defer w.wg.Done()
	connected, sid := true, int64(0)
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.State {
			case zk.StateHasSession:
				if s := w.conn.SessionID(); s != sid && sid != 0 {
					w.tl.Add("cluster", "ZooKeeper: the watcher's new session 0x%x (via %s)", s, ev.Server)
				} else if !connected {
					w.tl.Add("cluster", "ZooKeeper: the watcher reconnected, same session 0x%x (via %s)", s, ev.Server)
				}
				sid, connected = w.conn.SessionID(), true
			case zk.StateDisconnected:
				if connected {
					w.tl.Add("cluster", "ZooKeeper: the watcher lost its connection (to %s)", ev.Server)
				}
				connected = false
			case zk.StateExpired:
				w.tl.Add("cluster", "ZooKeeper: the watcher's session 0x%x expired", sid)
				connected = false
			}
		}
	}
}

// node starts the goroutine that follows one znode (its children with
// children): read with a watch, report, wait for the watch or stop.
func (w *clusterWatcher) node(path string, children bool, report func(prev, cur znode, first bool)) {
	w.wg.Add(1)
	w.ready.Add(1)
	go func() {
		defer w.wg.Done()
		first, readOnce := true, false
		defer func() {
			if !readOnce {
				w.ready.Done()
			}
		}()
		var prev znode
		backoff := 100 * time.Millisecond
		for {
			cur, ch, err := w.read(path, children)
			if err != nil {
				select {
				case <-w.stop:
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			report(prev, cur, first)
			prev, first = cur, false
			if !readOnce {
				readOnce = true
				w.ready.Done()
			}
			select {
			case <-w.stop:
				return
			case <-ch: // changed, or the watch was lost with the session: read again
			}
		}
	}()
}

// read reads path and sets a watch on it.
func (w *clusterWatcher) read(path string, children bool) (znode, <-chan zk.Event, error) {
	abs := w.chroot + path
	var n znode
	var (
		kids []string
		data []byte
		st   *zk.Stat
		ch   <-chan zk.Event
		err  error
	)
	if children {
		kids, st, ch, err = w.conn.ChildrenW(abs)
	} else {
		data, st, ch, err = w.conn.GetW(abs)
	}
	if errors.Is(err, zk.ErrNoNode) {
		// Absent: watch for its creation; if it was created meanwhile,
		// read it instead.
		var ok bool
		ok, _, ch, err = w.conn.ExistsW(abs)
		if err == nil && ok {
			return w.read(path, children)
		}
		return n, ch, err
	}
	if err != nil {
		return n, nil, err
	}
	n.exists, n.stat = true, *st
	if !children {
		n.data = data
		return n, ch, nil
	}
	n.children = map[string]int64{}
	for _, k := range kids {
		ok, kst, err := w.conn.Exists(abs + "/" + k)
		if err != nil {
			return n, nil, err
		}
		if ok {
			n.children[k] = kst.Czxid
		}
	}
	return n, ch, nil
}

// unseen describes the writes of a znode between two reads that were not
// read by themselves ("" when there were none): version counts the data
// writes, a new czxid means it was deleted and created again.
func unseen(prev, cur znode, first bool) string {
	switch {
	case first || !prev.exists || !cur.exists:
		return ""
	case cur.stat.Czxid != prev.stat.Czxid:
		return "; deleted and created again since the last read"
	case cur.stat.Version-prev.stat.Version > 1:
		return fmt.Sprintf("; %d writes since the last read (zk version %d -> %d), %d not seen by themselves",
			cur.stat.Version-prev.stat.Version, prev.stat.Version, cur.stat.Version, cur.stat.Version-prev.stat.Version-1)
	}
	return ""
}

func (w *clusterWatcher) controller(prev, cur znode, first bool) {
	if !cur.exists {
		if first || prev.exists {
			w.tl.Add("cluster", "no controller (/controller absent)")
		}
		return
	}
	if !first && prev.exists && cur.stat.Czxid == prev.stat.Czxid && cur.stat.Version == prev.stat.Version {
		return
	}
	who := "unreadable /controller: " + strconv.Quote(string(cur.data))
	if c, err := zkpaths.DecodeController(cur.data); err == nil {
		who = fmt.Sprintf("controller is broker %d", c.BrokerID)
	}
	w.tl.Add("cluster", "%s (session 0x%x)%s", who, cur.stat.EphemeralOwner, unseen(prev, cur, first))
}

func (w *clusterWatcher) controllerEpoch(prev, cur znode, first bool) {
	if !cur.exists {
		if first || prev.exists {
			w.tl.Add("cluster", "no /controller_epoch")
		}
		return
	}
	if !first && prev.exists && cur.stat.Czxid == prev.stat.Czxid && cur.stat.Version == prev.stat.Version {
		return
	}
	epoch, err := zkpaths.DecodeControllerEpoch(cur.data)
	if err != nil {
		w.tl.Add("cluster", "unreadable /controller_epoch: %v", err)
		return
	}
	w.tl.Add("cluster", "controller epoch %d%s", epoch, unseen(prev, cur, first))
}

// brokers reports the registrations: the set of ids, and each broker that
// registered (its czxid is its broker epoch) or went. A broker that
// registers with another epoch than the last one seen for it, whether or
// not its registration was seen gone in between, registered "again": its
// ZooKeeper session was replaced (or the broker restarted).
func (w *clusterWatcher) brokers(prev, cur znode, first bool) {
	ids := func(n znode) []int {
		var out []int
		for k := range n.children {
			if id, err := strconv.Atoi(k); err == nil {
				out = append(out, id)
			}
		}
		sort.Ints(out)
		return out
	}
	now, before := ids(cur), ids(prev)
	if first {
		var epochs []string
		for _, id := range now {
			epochs = append(epochs, fmt.Sprintf("%d: %d", id, cur.children[strconv.Itoa(id)]))
		}
		w.tl.Add("cluster", "registered brokers %v (broker epochs %s)", now, strings.Join(epochs, ", "))
		for _, id := range now {
			w.epochs[id] = cur.children[strconv.Itoa(id)]
		}
		return
	}
	for _, id := range before {
		k := strconv.Itoa(id)
		if _, ok := cur.children[k]; !ok {
			w.tl.Add("cluster", "broker %d's registration /brokers/ids/%d is gone (broker epoch %d)", id, id, prev.children[k])
		}
	}
	for _, id := range now {
		k := strconv.Itoa(id)
		epoch := cur.children[k]
		switch old, ok := prev.children[k]; {
		case ok && old != epoch:
			w.tl.Add("cluster", "broker %d registered again with a new broker epoch %d (was %d): its registration was deleted and created again since the last read", id, epoch, old)
		case ok:
		case w.epochs[id] != 0 && w.epochs[id] != epoch:
			w.tl.Add("cluster", "broker %d registered again with a new broker epoch %d (was %d)", id, epoch, w.epochs[id])
		default:
			w.tl.Add("cluster", "broker %d registered (broker epoch %d)", id, epoch)
		}
		w.epochs[id] = epoch
	}
	if !slices.Equal(now, before) {
		w.tl.Add("cluster", "registered brokers %v", now)
	}
}

func (w *clusterWatcher) partition(p int32, prev, cur znode, first bool) {
	if !cur.exists {
		if !first && prev.exists {
			w.tl.Add("cluster", "partition %d: state znode deleted", p)
		}
		return
	}
	if !first && prev.exists && cur.stat.Czxid == prev.stat.Czxid && cur.stat.Version == prev.stat.Version {
		return
	}
	st, err := zkpaths.DecodeLeaderAndIsr(cur.data, cur.stat.Version)
	if err != nil {
		w.tl.Add("cluster", "partition %d: unreadable state: %v", p, err)
		return
	}
	var old zkpaths.LeaderAndIsr
	if prev.exists {
		old, _ = zkpaths.DecodeLeaderAndIsr(prev.data, prev.stat.Version)
	}
	var changes []string
	if first || st.Leader != old.Leader || st.LeaderEpoch != old.LeaderEpoch {
		changes = append(changes, fmt.Sprintf("leader %d (epoch %d)", st.Leader, st.LeaderEpoch))
	}
	if first || !slices.Equal(st.ISR, old.ISR) {
		changes = append(changes, fmt.Sprintf("isr %v", st.ISR))
	}
	if len(changes) == 0 {
		changes = append(changes, fmt.Sprintf("rewritten, leader %d (epoch %d) and isr %v as before", st.Leader, st.LeaderEpoch, st.ISR))
	}
	w.tl.Add("cluster", "partition %d: %s (controller epoch %d, zk version %d%s)", p, strings.Join(changes, ", "), st.ControllerEpoch, st.ZkVersion, unseen(prev, cur, first))
}
