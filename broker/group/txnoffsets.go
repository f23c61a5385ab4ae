package group

// Transactional offset commits (KIP-98, KIP-447): TxnOffsetCommit writes
// offsets in a transactional batch of the producer; they stay pending in
// the group, invisible to OffsetFetch, until the transaction coordinator's
// COMMIT or ABORT marker reaches the group's __consumer_offsets partition
// (HandleTxnCompletion). Kafka's GroupCoordinator.handleTxnCommitOffsets,
// GroupMetadataManager.storeOffsets (with a producer id),
// handleTxnCompletion, and GroupMetadata's pendingTransactionalOffsetCommits.
//
// Which committed offset wins: as in Kafka, the one whose record is later
// in the log. Every offset in the cache carries its log position (pos): a
// loaded record's batch base offset, or for a record written since loading
// newWritePos plus the group's write ticket; a group's writes reach the log
// in ticket order (writeLocked) and after everything loaded, so positions
// compare like log offsets within a group. A transaction's offsets are
// applied at its COMMIT marker only where they are newer than the cached
// offset of the same partition.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// newWritePos is the position of the first record a group writes after it
// was loaded or created; it is above any log offset.
const newWritePos = int64(1) << 62

// pendingTxnOffset is one partition's offset in an open transaction
// (Kafka's CommitRecordMetadataAndOffset in pendingTransactionalOffsetCommits).
type pendingTxnOffset struct {
	value OffsetValue
	// appended is false until the record is durable; only appended
	// offsets are applied by a COMMIT.
	appended bool
	pos      int64
}

// TxnOffsetCommit handles TxnOffsetCommit v0-v3. Checks needing topic
// metadata or the authorizer (TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
// GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED,
// UNKNOWN_TOPIC_OR_PARTITION) are the caller's, which passes only the
// partitions that survived them. The records are written as one
// transactional batch of the request's producer (base sequence 0, as
// Kafka's storeOffsets), so the partition's producer state fences an older
// epoch (INVALID_PRODUCER_EPOCH) and the transaction's marker completes
// them.
func (c *Coordinator) TxnOffsetCommit(_ context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	resp.Version = req.Version
	code, codes := c.txnOffsetCommit(req)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = code
			if code == 0 {
				rp.ErrorCode = codes[common.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// txnOffsetCommit returns a request-wide code, or per-partition codes.
func (c *Coordinator) txnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) (int16, map[common.TopicPartition]int16) {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code, nil
	}
	// An unknown group is created Empty, as Kafka does for transactional
	// commits (a producer may commit for a group that has no members here).
	g, code := c.lockGroup(req.Group, true, 0)
	if code != 0 {
		return code, nil
	}
	defer g.mu.Unlock()
	switch {
	case g.state == Dead:
		// Removed by another request meanwhile; the client looks the
		// coordinator up again.
		return kerr.CoordinatorNotAvailable.Code, nil
	case g.checkStaticLocked(req.MemberID, req.InstanceID) != 0:
		return kerr.FencedInstanceID.Code, nil
	case req.MemberID != "" && g.members[req.MemberID] == nil:
		// KIP-447: the member id and generation are enforced when sent.
		return kerr.UnknownMemberID.Code, nil
	case req.Generation >= 0 && req.Generation != g.generation:
		return kerr.IllegalGeneration.Code, nil
	}

	now := c.clock.Now()
	codes := map[common.TopicPartition]int16{}
	values := map[common.TopicPartition]OffsetValue{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := common.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			v, code := c.newOffsetValue(p.Offset, p.Metadata, now)
			if code != 0 {
				codes[tp] = code
				continue
			}
			if req.Version >= 2 {
				v.LeaderEpoch = p.LeaderEpoch
			}
			// A partition listed twice: the last entry wins, one record
			// per partition (Kafka builds a map from the request).
			values[tp] = v
		}
	}
	if len(values) == 0 {
		return 0, codes
	}
	recs := offsetRecords(g.id, values)

	// Pending from now on (Kafka's prepareTxnOffsetCommit), so a
	// require_stable OffsetFetch answers UNSTABLE_OFFSET_COMMIT while the
	// write is in flight.
	pend := g.pendingTxn[req.ProducerID]
	if pend == nil {
		pend = map[common.TopicPartition]*pendingTxnOffset{}
		g.pendingTxn[req.ProducerID] = pend
	}
	mine := map[common.TopicPartition]*pendingTxnOffset{}
	prev := map[common.TopicPartition]*pendingTxnOffset{}
	for tp, v := range values {
		p := &pendingTxnOffset{value: v}
		if old := pend[tp]; old != nil {
			prev[tp] = old
		}
		pend[tp] = p
		mine[tp] = p
	}
	c.addProducerGroup(req.ProducerID, g.id)

	pos := newWritePos + int64(g.writeTicket)
	err := c.writeLocked(g, buildTxnBatch(now, req.ProducerID, req.ProducerEpoch, recs))
	if g.state == Dead || g.unloaded {
		// Removed or moved meanwhile; the log has the records and the
		// marker will be applied by whoever loads the partition.
		return appendErrorCode(err), codes
	}
	cur := g.pendingTxn[req.ProducerID]
	if err != nil {
		c.log.Warn("failed to commit transactional offsets", "group", g.id, "producer_id", req.ProducerID, "err", err)
		// Undo this request only: an offset the transaction committed
		// earlier stays pending (Kafka drops it too, with the failed one;
		// a fenced zombie's commit must not erase the live producer's).
		for tp, p := range mine {
			if cur == nil || cur[tp] != p {
				continue
			}
			if old := prev[tp]; old != nil {
				cur[tp] = old
			} else {
				delete(cur, tp)
			}
		}
		if len(cur) == 0 {
			delete(g.pendingTxn, req.ProducerID)
			c.removeProducerGroup(req.ProducerID, g.id)
		}
		return appendErrorCode(err), nil
	}
	for tp, p := range mine {
		// A later commit of the same partition in the transaction may
		// have replaced the entry; that one is marked by its own write.
		if cur != nil && cur[tp] == p {
			p.appended, p.pos = true, pos
		}
	}
	return 0, codes
}

// offsetRecords encodes one offset commit record per partition, in key
// order.
func offsetRecords(group string, values map[common.TopicPartition]OffsetValue) []record.Record {
	recs := make([]record.Record, 0, len(values))
	for tp, v := range values {
		recs = append(recs, record.Record{
			Key:   EncodeOffsetKey(OffsetKey{Version: OffsetKeyVersion1, Group: group, Topic: tp.Topic, Partition: tp.Partition}),
			Value: EncodeOffsetValue(v),
		})
	}
	sortByKey(recs)
	return recs
}

// buildTxnBatch encodes offset commit records as the transactional batch
// of a producer (base sequence 0, CreateTime = now).
func buildTxnBatch(now time.Time, producerID int64, producerEpoch int16, recs []record.Record) []byte {
	o := record.DefaultBuildOptions()
	o.Transactional = true
	o.ProducerID = producerID
	o.ProducerEpoch = producerEpoch
	o.BaseSequence = 0
	return record.BuildAt(o, now, recs)
}

// HandleTxnCompletion is called once a COMMIT (commit true) or ABORT
// marker of producerID is in the listed __consumer_offsets partitions:
// the producer's pending offsets of the groups in those partitions become
// the committed offsets (where newer than the cached ones) or are dropped
// (Kafka's GroupMetadataManager.handleTxnCompletion). Groups that moved to
// another coordinator meanwhile are skipped: the new owner applies the
// marker when it loads the partition. It takes only group locks and
// returns without I/O. For a partition still loading, the completion is
// applied when the load publishes its groups (the load may have read the
// log before the marker; applying it twice changes nothing).
func (c *Coordinator) HandleTxnCompletion(producerID int64, offsetsPartitions []int32, commit bool) {
	in := map[int32]bool{}
	for _, p := range offsetsPartitions {
		in[p] = true
	}
	c.mu.Lock()
	for p := range in {
		if o, ok := c.owned[p]; ok && o.state == partitionLoading {
			o.completions = append(o.completions, txnCompletion{producerID: producerID, commit: commit})
			c.owned[p] = o
		}
	}
	var gs []*Group
	for id := range c.producerGroups[producerID] {
		if !in[c.PartitionFor(id)] {
			continue
		}
		// The transaction is over in this group's partition whether or
		// not the group is still here (deleted, unloaded): forget it.
		c.removeProducerGroupLocked(producerID, id)
		if g := c.groups[id]; g != nil {
			gs = append(gs, g)
		}
	}
	c.mu.Unlock()
	for _, g := range gs {
		g.mu.Lock()
		if g.state != Dead && !g.unloaded {
			g.completePendingTxnLocked(producerID, commit)
		}
		g.mu.Unlock()
	}
}

// txnCompletion is one HandleTxnCompletion call kept for a loading
// partition.
type txnCompletion struct {
	producerID int64
	commit     bool
}

// completePendingTxnLocked ends producerID's transaction in g (Kafka's
// completePendingTxnOffsetCommit).
func (g *Group) completePendingTxnLocked(producerID int64, commit bool) {
	pend := g.pendingTxn[producerID]
	delete(g.pendingTxn, producerID)
	if !commit {
		return
	}
	for tp, p := range pend {
		if !p.appended {
			// The marker cannot precede the producer's commit being
			// acknowledged; an offset whose write failed was removed.
			continue
		}
		g.putOffsetLocked(tp, p.value, p.pos)
	}
}

// putOffsetLocked caches v for tp unless the cached offset is from a
// later record (Kafka's olderThan check).
func (g *Group) putOffsetLocked(tp common.TopicPartition, v OffsetValue, pos int64) {
	if _, ok := g.offsets[tp]; ok && g.offsetPos[tp] > pos {
		return
	}
	g.offsets[tp] = v
	g.offsetPos[tp] = pos
}

// deleteOffsetLocked drops tp's committed offset and, as Kafka's
// removeOffsets, any pending transactional offset of it.
func (g *Group) deleteOffsetLocked(tp common.TopicPartition) {
	delete(g.offsets, tp)
	delete(g.offsetPos, tp)
	for pid, pend := range g.pendingTxn {
		delete(pend, tp)
		if len(pend) == 0 {
			delete(g.pendingTxn, pid)
		}
	}
}

// hasPendingOffsetLocked reports whether tp has an offset commit in
// flight or in an open transaction (Kafka's
// hasPendingOffsetCommitsForTopicPartition).
func (g *Group) hasPendingOffsetLocked(tp common.TopicPartition) bool {
	if g.inflight[tp] > 0 {
		return true
	}
	for _, pend := range g.pendingTxn {
		if _, ok := pend[tp]; ok {
			return true
		}
	}
	return false
}

// hasOffsetsLocked is Kafka's GroupMetadata.hasOffsets: committed,
// in-flight or pending transactional offsets keep a group alive.
func (g *Group) hasOffsetsLocked() bool {
	return len(g.offsets) > 0 || len(g.inflight) > 0 || len(g.pendingTxn) > 0
}

// addProducerGroup records that producerID has pending offsets in group
// (Kafka's openGroupsForProducer). Callable with a group lock held.
func (c *Coordinator) addProducerGroup(producerID int64, group string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	set := c.producerGroups[producerID]
	if set == nil {
		set = map[string]struct{}{}
		c.producerGroups[producerID] = set
	}
	set[group] = struct{}{}
}

func (c *Coordinator) removeProducerGroup(producerID int64, group string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeProducerGroupLocked(producerID, group)
}

func (c *Coordinator) removeProducerGroupLocked(producerID int64, group string) {
	if set := c.producerGroups[producerID]; set != nil {
		delete(set, group)
		if len(set) == 0 {
			delete(c.producerGroups, producerID)
		}
	}
}

// removeGroupFromProducersLocked forgets group in every producer's set
// (a group unloaded with its partition). Must hold c.mu.
func (c *Coordinator) removeGroupFromProducersLocked(group string) {
	for pid := range c.producerGroups {
		c.removeProducerGroupLocked(pid, group)
	}
}
