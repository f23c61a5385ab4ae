package group

// Loading a __consumer_offsets partition when this broker becomes its
// leader (Kafka's GroupMetadataManager.loadGroupsAndOffsets): read every
// record in offset order, keep the last word on each group and offset,
// rebuild the groups and publish them if the ownership is still current.
//
// Transactional batches (TxnOffsetCommit) are held per producer until the
// producer's control batch: COMMIT applies each held offset unless the
// partition already has one from a later record (log position = batch base
// offset, as Kafka), ABORT drops them; a tombstone in a transactional batch
// removes the held offset. Offsets whose marker is not in the log yet stay
// pending in the loaded group (a group is loaded for them even with no
// other record), waiting for HandleTxnCompletion.

import (
	"log/slog"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// loadedOffset is an offset read from the log with its batch's base
// offset.
type loadedOffset struct {
	value OffsetValue
	pos   int64
}

type groupTP struct {
	group string
	tp    common.TopicPartition
}

// partitionLoad accumulates what one __consumer_offsets partition says,
// read in offset order: the last record for a key wins.
type partitionLoad struct {
	partition int32
	log       *slog.Logger
	offsets   map[string]map[common.TopicPartition]loadedOffset
	groups    map[string]*GroupValue // nil value: the group's metadata was deleted
	seen      map[string]bool        // every group a record named
	// Transactional offset commits are applied only when their producer's
	// COMMIT marker is read; ABORT drops them.
	pendingTxn map[int64]map[groupTP]loadedOffset
}

func newPartitionLoad(partition int32, log *slog.Logger) *partitionLoad {
	return &partitionLoad{partition: partition, log: log,
		offsets: map[string]map[common.TopicPartition]loadedOffset{}, groups: map[string]*GroupValue{},
		seen: map[string]bool{}, pendingTxn: map[int64]map[groupTP]loadedOffset{}}
}

// load reads the partition and installs its groups if the ownership that
// started it is still current.
func (c *Coordinator) load(partition int32, epoch uint64) {
	start := c.clock.Now()
	pl := newPartitionLoad(partition, c.log)
	if err := c.store.Read(c.ctx, partition, pl.readBatch); err != nil {
		c.log.Error("failed to load __consumer_offsets partition", "partition", partition, "err", err)
		c.mu.Lock()
		if o := c.owned[partition]; o.epoch == epoch && o.state == partitionLoading {
			delete(c.owned, partition)
		}
		c.mu.Unlock()
		return
	}
	// Build the groups before publishing them; members get a fresh
	// session, as Kafka schedules heartbeats for every loaded member.
	now := c.clock.Now()
	pending := map[string]map[int64]map[common.TopicPartition]loadedOffset{}
	for pid, held := range pl.pendingTxn {
		for gtp, lo := range held {
			byPID := pending[gtp.group]
			if byPID == nil {
				byPID = map[int64]map[common.TopicPartition]loadedOffset{}
				pending[gtp.group] = byPID
			}
			if byPID[pid] == nil {
				byPID[pid] = map[common.TopicPartition]loadedOffset{}
			}
			byPID[pid][gtp.tp] = lo
			pl.seen[gtp.group] = true
		}
	}
	var built []*Group
	for id := range pl.seen {
		gv := pl.groups[id]
		if gv == nil && len(pl.offsets[id]) == 0 && len(pending[id]) == 0 {
			continue
		}
		built = append(built, c.groupFromRecords(id, partition, now, gv, pl.offsets[id], pending[id]))
	}
	if !c.publishLoaded(partition, epoch, built) {
		return
	}
	c.log.Info("finished loading offsets and group metadata", "partition", partition, "groups", len(built),
		"duration_ms", c.clock.Now().Sub(start).Milliseconds())
}

// publishLoaded installs the built groups and marks the partition loaded,
// unless it was resigned (or re-acquired) meanwhile: then the groups are
// shut down and it reports false.
func (c *Coordinator) publishLoaded(partition int32, epoch uint64, built []*Group) bool {
	c.mu.Lock()
	if o := c.owned[partition]; o.epoch != epoch || o.state != partitionLoading {
		c.mu.Unlock()
		c.unloadGroups(built)
		return false
	}
	completions := c.owned[partition].completions
	for _, g := range built {
		if old := c.groups[g.id]; old != nil {
			c.log.Warn("replacing group already in the cache while loading", "group", g.id)
		}
		c.groups[g.id] = g
		// Not yet published (the map needs c.mu, held here), so nobody
		// else holds g.mu; using it without the lock is safe.
		for _, done := range completions {
			g.completePendingTxnLocked(done.producerID, done.commit)
		}
		for pid := range g.pendingTxn {
			set := c.producerGroups[pid]
			if set == nil {
				set = map[string]struct{}{}
				c.producerGroups[pid] = set
			}
			set[g.id] = struct{}{}
		}
	}
	c.owned[partition] = ownership{state: partitionLoaded, epoch: epoch}
	c.mu.Unlock()
	return true
}

// readBatch takes in one batch of the partition. Unreadable records are
// logged and skipped; only a batch that does not parse is an error.
func (pl *partitionLoad) readBatch(batch []byte) error {
	h, err := record.ParseBatchHeader(batch)
	if err != nil {
		return err
	}
	if h.IsControl() {
		// Only the first record of a control batch counts (an emptied
		// one, left by the cleaner, changes nothing).
		first := true
		return record.ForEachRecord(batch, func(r *record.Record) error {
			if first {
				first = false
				pl.readControl(h, r)
			}
			return nil
		})
	}
	if h.IsTransactional() && pl.pendingTxn[h.ProducerID] == nil {
		pl.pendingTxn[h.ProducerID] = map[groupTP]loadedOffset{}
	}
	return record.ForEachRecord(batch, func(r *record.Record) error {
		pl.readRecord(h, r)
		return nil
	})
}

// readControl ends a producer's transaction: COMMIT applies its pending
// offset commits that are newer than the loaded ones, ABORT drops them.
func (pl *partitionLoad) readControl(h record.BatchHeader, r *record.Record) {
	_, t, err := record.ParseControlKey(r.Key)
	if err != nil {
		pl.log.Warn("skipping malformed control record", "partition", pl.partition, "err", err)
		return
	}
	if t == record.ControlCommit {
		for gtp, lo := range pl.pendingTxn[h.ProducerID] {
			if cur, ok := pl.offsets[gtp.group][gtp.tp]; ok && cur.pos > lo.pos {
				continue
			}
			pl.put(gtp, lo)
		}
	}
	delete(pl.pendingTxn, h.ProducerID)
}

// readRecord takes in an offset commit or a group metadata record.
func (pl *partitionLoad) readRecord(h record.BatchHeader, r *record.Record) {
	k, err := DecodeKey(r.Key)
	if err != nil {
		pl.log.Warn("skipping unreadable __consumer_offsets record", "partition", pl.partition,
			"offset", r.Offset(h), "err", err)
		return
	}
	switch {
	case k.Offset != nil:
		gtp := groupTP{group: k.Offset.Group, tp: common.TopicPartition{Topic: k.Offset.Topic, Partition: k.Offset.Partition}}
		if r.Value == nil {
			if h.IsTransactional() {
				delete(pl.pendingTxn[h.ProducerID], gtp)
			} else {
				pl.seen[gtp.group] = true
				delete(pl.offsets[gtp.group], gtp.tp)
			}
			return
		}
		v, err := DecodeOffsetValue(r.Value)
		if err != nil {
			pl.log.Warn("skipping unreadable offset commit value", "partition", pl.partition, "offset", r.Offset(h), "err", err)
			return
		}
		lo := loadedOffset{value: v, pos: h.BaseOffset}
		if h.IsTransactional() {
			pl.pendingTxn[h.ProducerID][gtp] = lo
		} else {
			pl.put(gtp, lo)
		}
	case k.Group != nil:
		pl.seen[k.Group.Group] = true
		if r.Value == nil {
			// A group tombstone removes the metadata only; DeleteGroups
			// writes offset tombstones of its own.
			pl.groups[k.Group.Group] = nil
			return
		}
		v, err := DecodeGroupValue(r.Value)
		if err != nil {
			pl.log.Warn("skipping unreadable group metadata value", "partition", pl.partition, "offset", r.Offset(h), "err", err)
			return
		}
		pl.groups[k.Group.Group] = &v
	}
}

func (pl *partitionLoad) put(gtp groupTP, lo loadedOffset) {
	pl.seen[gtp.group] = true
	if pl.offsets[gtp.group] == nil {
		pl.offsets[gtp.group] = map[common.TopicPartition]loadedOffset{}
	}
	pl.offsets[gtp.group][gtp.tp] = lo
}

// groupFromRecords rebuilds a group from its last metadata record (nil if
// none: a group used only for offsets), its offsets and the offsets of
// transactions still open, by producer id.
func (c *Coordinator) groupFromRecords(id string, partition int32, now time.Time, gv *GroupValue,
	offsets map[common.TopicPartition]loadedOffset, pending map[int64]map[common.TopicPartition]loadedOffset) *Group {
	g := newGroup(id, partition, now)
	g.mu.Lock()
	defer g.mu.Unlock()
	// Unknown (v0/v1 value, or no value): expiry falls back to commit
	// timestamps.
	g.stateTime = time.UnixMilli(-1)
	if gv != nil {
		g.protocolType = gv.ProtocolType
		g.generation = gv.Generation
		if gv.Protocol != nil {
			g.protocol = *gv.Protocol
		}
		if gv.Leader != nil {
			g.leader = *gv.Leader
		}
		if gv.CurrentStateTimestamp >= 0 {
			g.stateTime = time.UnixMilli(gv.CurrentStateTimestamp)
		}
		for _, mv := range gv.Members {
			g.joinSeq++
			m := &Member{ID: mv.MemberID, InstanceID: mv.InstanceID, ClientID: mv.ClientID, ClientHost: mv.ClientHost,
				RebalanceTimeout: time.Duration(mv.RebalanceTimeout) * time.Millisecond,
				SessionTimeout:   time.Duration(mv.SessionTimeout) * time.Millisecond,
				ProtocolType:     gv.ProtocolType, Protocols: []Protocol{{Name: g.protocol, Metadata: mv.Subscription}},
				Assignment: mv.Assignment, joinSeq: g.joinSeq}
			g.members[m.ID] = m
			if m.InstanceID != nil {
				g.static[*m.InstanceID] = m.ID
			}
		}
		if len(g.members) > 0 {
			g.state = Stable
			if g.members[g.leader] == nil {
				g.leader = g.sortedMembersLocked()[0].ID
			}
		}
	}
	for tp, lo := range offsets {
		g.offsets[tp] = lo.value
		g.offsetPos[tp] = lo.pos
	}
	for pid, held := range pending {
		pend := map[common.TopicPartition]*pendingTxnOffset{}
		for tp, lo := range held {
			pend[tp] = &pendingTxnOffset{value: lo.value, appended: true, pos: lo.pos}
		}
		g.pendingTxn[pid] = pend
	}
	for _, m := range g.members {
		c.scheduleSessionLocked(g, m)
	}
	return g
}
