package group

import (
	"context"
	"sort"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit handles OffsetCommit v1-v8 (v0 stores offsets in ZooKeeper
// and is the api layer's business). Partition-level checks that need
// topic metadata (unknown topic, authorization) are done by the caller,
// which passes only the partitions that survived them.
func (c *Coordinator) OffsetCommit(_ context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	code, codes := c.offsetCommit(req)
	for _, t := range req.Topics {
		rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			pc := code
			if pc == 0 {
				pc = codes[common.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			}
			rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: pc})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// offsetCommit returns a request-wide code, or per-partition codes.
func (c *Coordinator) offsetCommit(req *kmsg.OffsetCommitRequest) (int16, map[common.TopicPartition]int16) {
	g, code := c.lockGroup(req.Group, req.Generation < 0, kerr.IllegalGeneration.Code)
	if code != 0 {
		return code, nil
	}
	defer g.mu.Unlock()
	code, w := c.offsetCommitPrepareLocked(g, req)
	if code != 0 {
		return code, nil
	}
	if len(w.recs) == 0 {
		return 0, w.codes
	}
	for tp := range w.values {
		g.inflight[tp]++
	}
	pos := newWritePos + int64(g.writeTicket)
	err := c.writeLocked(g, buildBatch(w.now, w.recs))
	for tp := range w.values {
		if g.inflight[tp]--; g.inflight[tp] <= 0 {
			delete(g.inflight, tp)
		}
	}
	if err != nil {
		c.log.Warn("failed to commit offsets", "group", req.Group, "err", err)
		return appendErrorCode(err), nil
	}
	// The cache changes only once the records are durable.
	if g.state != Dead {
		for tp, v := range w.values {
			g.putOffsetLocked(tp, v, pos)
		}
	}
	return 0, w.codes
}

type offsetWrite struct {
	now    time.Time
	recs   []record.Record
	values map[common.TopicPartition]OffsetValue
	codes  map[common.TopicPartition]int16 // per-partition refusals
}

func (c *Coordinator) offsetCommitPrepareLocked(g *Group, req *kmsg.OffsetCommitRequest) (int16, *offsetWrite) {
	simple := req.Generation < 0 && req.MemberID == "" && req.InstanceID == nil
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	if simple {
		if g.state != Empty {
			// Only a member may commit for a group with members.
			return kerr.UnknownMemberID.Code, nil
		}
	} else {
		if code := g.checkStaticLocked(req.MemberID, req.InstanceID); code != 0 {
			return code, nil
		}
		m := g.members[req.MemberID]
		if m == nil {
			return kerr.UnknownMemberID.Code, nil
		}
		if req.Generation != g.generation {
			return kerr.IllegalGeneration.Code, nil
		}
		if g.state == CompletingRebalance {
			return kerr.RebalanceInProgress.Code, nil
		}
		c.touchSessionLocked(g, m) // a commit counts as a heartbeat
	}
	now := c.clock.Now()
	w := &offsetWrite{now: now, values: map[common.TopicPartition]OffsetValue{}, codes: map[common.TopicPartition]int16{}}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := common.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			v, code := c.newOffsetValue(p.Offset, p.Metadata, now)
			if code != 0 {
				w.codes[tp] = code
				continue
			}
			if req.Version >= 6 {
				v.LeaderEpoch = p.LeaderEpoch
			}
			if req.Version == 1 && p.Timestamp != -1 {
				v.CommitTimestamp = p.Timestamp
			}
			if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
				// An explicit retention is only expressible in value v1.
				v.Version = 1
				v.ExpireTimestamp = v.CommitTimestamp + req.RetentionTimeMillis
			}
			// A partition listed twice: the last entry wins, one record
			// per partition (Kafka builds a map from the request).
			w.values[tp] = v
		}
	}
	w.recs = offsetRecords(g.id, w.values)
	return 0, w
}

// newOffsetValue is the value of a commit of offset with metadata at now
// (value v3: no leader epoch or expiry yet), or OFFSET_METADATA_TOO_LARGE
// when the metadata exceeds offset.metadata.max.bytes.
func (c *Coordinator) newOffsetValue(offset int64, metadata *string, now time.Time) (OffsetValue, int16) {
	meta := ""
	if metadata != nil {
		meta = *metadata
	}
	if len(meta) > c.cfg.OffsetMetadataMaxBytes {
		return OffsetValue{}, kerr.OffsetMetadataTooLarge.Code
	}
	return OffsetValue{Version: offsetValueLatest, Offset: offset, LeaderEpoch: -1, Metadata: meta,
		CommitTimestamp: now.UnixMilli(), ExpireTimestamp: -1}, 0
}

// OffsetFetch handles OffsetFetch v1-v8. Groups that do not exist have no
// offsets and no error. Offsets of open transactions are not shown; with
// require_stable (v7+) a partition with a pending transactional offset or
// an offset commit still being written answers UNSTABLE_OFFSET_COMMIT
// (offset -1), so the consumer retries instead of reading an offset about
// to change.
func (c *Coordinator) OffsetFetch(_ context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			topics := requestedTopics(rg.Topics, func(t kmsg.OffsetFetchRequestGroupTopic) OffsetFetchTopic {
				return OffsetFetchTopic{Topic: t.Topic, Partitions: t.Partitions}
			})
			code, res := c.fetchOffsets(rg.Group, topics, req.RequireStable)
			out := kmsg.OffsetFetchResponseGroup{Group: rg.Group, ErrorCode: code}
			if code != 0 {
				res = nil // v8 reports coordinator errors per group
			}
			for _, t := range res {
				ot := kmsg.OffsetFetchResponseGroupTopic{Topic: t.Topic}
				for _, p := range t.Partitions {
					ot.Partitions = append(ot.Partitions, kmsg.OffsetFetchResponseGroupTopicPartition{Partition: p.Partition,
						Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, ErrorCode: p.ErrorCode})
				}
				out.Topics = append(out.Topics, ot)
			}
			resp.Groups = append(resp.Groups, out)
		}
		return resp
	}
	topics := requestedTopics(req.Topics, func(t kmsg.OffsetFetchRequestTopic) OffsetFetchTopic {
		return OffsetFetchTopic{Topic: t.Topic, Partitions: t.Partitions}
	})
	code, res := c.fetchOffsets(req.Group, topics, req.Version >= 7 && req.RequireStable)
	if code != 0 && req.Version >= 2 {
		resp.ErrorCode = code
		return resp
	}
	for _, t := range res {
		ot := kmsg.OffsetFetchResponseTopic{Topic: t.Topic}
		ot.Partitions = append(ot.Partitions, t.Partitions...) // v0/v1: errors per partition
		resp.Topics = append(resp.Topics, ot)
	}
	return resp
}

// requestedTopics converts the topics of an OffsetFetch request (the v8
// group form or the older top-level form). A nil list stays nil: it asks for
// every committed partition, while an empty list asks for none.
func requestedTopics[T any](in []T, conv func(T) OffsetFetchTopic) []OffsetFetchTopic {
	if in == nil {
		return nil
	}
	out := make([]OffsetFetchTopic, 0, len(in))
	for _, t := range in {
		out = append(out, conv(t))
	}
	return out
}

// OffsetFetchTopic names the partitions to fetch for one topic.
type OffsetFetchTopic struct {
	Topic      string
	Partitions []int32
}

type fetchedTopic struct {
	Topic      string
	Partitions []kmsg.OffsetFetchResponseTopicPartition
}

// fetchOffsets returns the committed offsets of the listed partitions, or
// of every committed partition when topics is nil.
func (c *Coordinator) fetchOffsets(groupID string, topics []OffsetFetchTopic, requireStable bool) (int16, []fetchedTopic) {
	// errorResult reports a coordinator error per partition, as v0/v1 do.
	errorResult := func(code int16) (int16, []fetchedTopic) {
		var res []fetchedTopic
		for _, t := range topics {
			ft := fetchedTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				ft.Partitions = append(ft.Partitions, kmsg.OffsetFetchResponseTopicPartition{Partition: p, Offset: -1, LeaderEpoch: -1, Metadata: strPtr(""), ErrorCode: code})
			}
			res = append(res, ft)
		}
		return code, res
	}
	g, code := c.lookup(groupID, false)
	if code != 0 {
		return errorResult(code)
	}
	offsets := map[common.TopicPartition]OffsetValue{}
	var unstable func(tp common.TopicPartition) bool
	if g != nil {
		g.mu.Lock()
		if code := lockedCode(g); code != 0 {
			g.mu.Unlock()
			return errorResult(code)
		}
		if g.state != Dead {
			for tp, v := range g.offsets {
				offsets[tp] = v
			}
			if requireStable {
				pending := map[common.TopicPartition]bool{}
				for tp := range g.inflight {
					pending[tp] = true
				}
				for _, pend := range g.pendingTxn {
					for tp := range pend {
						pending[tp] = true
					}
				}
				unstable = func(tp common.TopicPartition) bool { return pending[tp] }
			}
		}
		g.mu.Unlock()
	}
	if topics == nil {
		byTopic := map[string][]int32{}
		for tp := range offsets {
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		for t, ps := range byTopic {
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			topics = append(topics, OffsetFetchTopic{Topic: t, Partitions: ps})
		}
		sort.Slice(topics, func(i, j int) bool { return topics[i].Topic < topics[j].Topic })
	}
	var res []fetchedTopic
	for _, t := range topics {
		ft := fetchedTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			out := kmsg.OffsetFetchResponseTopicPartition{Partition: p, Offset: -1, LeaderEpoch: -1, Metadata: strPtr("")}
			tp := common.TopicPartition{Topic: t.Topic, Partition: p}
			if unstable != nil && unstable(tp) {
				out.ErrorCode = kerr.UnstableOffsetCommit.Code
			} else if v, ok := offsets[tp]; ok {
				out.Offset, out.LeaderEpoch, out.Metadata = v.Offset, v.LeaderEpoch, strPtr(v.Metadata)
			}
			ft.Partitions = append(ft.Partitions, out)
		}
		res = append(res, ft)
	}
	return 0, res
}

func strPtr(s string) *string { return &s }

// OffsetDelete handles OffsetDelete v0. Unknown topics and authorization
// are the caller's checks.
func (c *Coordinator) OffsetDelete(_ context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	code, codes := c.offsetDelete(req)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	for _, t := range req.Topics {
		rt := kmsg.OffsetDeleteResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition,
				ErrorCode: codes[common.TopicPartition{Topic: t.Topic, Partition: p.Partition}]})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (c *Coordinator) offsetDelete(req *kmsg.OffsetDeleteRequest) (int16, map[common.TopicPartition]int16) {
	g, code := c.lockGroup(req.Group, false, kerr.GroupIDNotFound.Code)
	if code != 0 {
		return code, nil
	}
	defer g.mu.Unlock()
	var subscribed map[string]bool
	switch g.state {
	case Dead:
		return kerr.GroupIDNotFound.Code, nil
	case Empty:
	default:
		if g.protocolType != ConsumerProtocolType {
			return kerr.NonEmptyGroup.Code, nil
		}
		subscribed, _ = g.subscribedTopicsLocked()
	}
	codes := map[common.TopicPartition]int16{}
	var recs []record.Record
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := common.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if subscribed[t.Topic] {
				codes[tp] = kerr.GroupSubscribedToTopic.Code
				continue
			}
			if _, ok := g.offsets[tp]; ok {
				// Dropped from the cache (with any pending transactional
				// offset) before the tombstone is durable, as Kafka does.
				g.deleteOffsetLocked(tp)
				recs = append(recs, offsetTombstone(g.id, common.TopicPartition{Topic: t.Topic, Partition: p.Partition}))
			}
		}
	}
	if len(recs) > 0 {
		if err := c.writeLocked(g, buildBatch(c.clock.Now(), recs)); err != nil {
			c.log.Warn("failed to write offset tombstones", "group", req.Group, "err", err)
			return appendErrorCode(err), nil
		}
	}
	return 0, codes
}

// ---- offset expiry (GroupMetadataManager.cleanupGroupMetadata) ----

func (c *Coordinator) scheduleExpiryLocked() {
	if c.closed {
		return
	}
	c.expiryTimer = c.clock.AfterFunc(c.cfg.OffsetsRetentionCheckInterval, func() {
		c.ExpireOffsets()
		c.mu.Lock()
		c.scheduleExpiryLocked()
		c.mu.Unlock()
	})
}

// ExpireOffsets runs one offset-expiry pass over the loaded groups (the
// coordinator also runs it every offsets.retention.check.interval.ms). It
// returns the number of offsets removed.
func (c *Coordinator) ExpireOffsets() int {
	gs := c.groupsWhere(func(g *Group) bool { return c.owned[g.partition].state == partitionLoaded })
	now := c.clock.Now()
	total := 0
	for _, g := range gs {
		g.mu.Lock()
		if g.unloaded || g.state == Dead {
			g.mu.Unlock()
			continue
		}
		recs := c.expireGroupOffsetsLocked(g, now)
		total += len(recs)
		deadGroup := false
		if g.state == Empty && !g.hasOffsetsLocked() && len(g.members) == 0 {
			// Nothing left: the group itself goes.
			if err := g.transitionLocked(Dead, now); err == nil {
				deadGroup = true
				recs = append(recs, record.Record{Key: EncodeGroupKey(g.id)})
			}
		}
		if len(recs) > 0 {
			c.writeAsyncLocked(g, buildBatch(now, recs), "expired offsets of "+g.id)
		}
		g.mu.Unlock()
		if deadGroup {
			c.removeGroup(g)
			c.log.Info("group has no offsets left and is removed", "group", g.id)
		}
	}
	return total
}

// groupsWhere returns the groups keep accepts; keep runs under c.mu, and
// the caller locks each returned group without holding c.mu.
func (c *Coordinator) groupsWhere(keep func(g *Group) bool) []*Group {
	c.mu.Lock()
	defer c.mu.Unlock()
	var gs []*Group
	for _, g := range c.groups {
		if keep(g) {
			gs = append(gs, g)
		}
	}
	return gs
}

// offsetTombstone is the record that deletes the committed offset of tp in
// group.
func offsetTombstone(group string, tp common.TopicPartition) record.Record {
	return record.Record{Key: EncodeOffsetKey(OffsetKey{Version: OffsetKeyVersion1, Group: group, Topic: tp.Topic, Partition: tp.Partition})}
}

// sortByKey orders records by key bytes, so that a batch of tombstones is
// the same whatever the map order was.
func sortByKey(recs []record.Record) {
	sort.Slice(recs, func(i, j int) bool { return string(recs[i].Key) < string(recs[j].Key) })
}

// expireGroupOffsetsLocked removes the expired offsets of g and returns
// their tombstones. Which offsets may expire, and from when retention
// counts (Kafka's rule):
//   - a group with a protocol type that is Empty: all offsets, from when
//     it became Empty (the commit timestamp if that is unknown);
//   - a Stable "consumer" group with known subscriptions: offsets of the
//     topics no member subscribes to any more, from the commit timestamp;
//   - a group without protocol type (offsets only): all offsets, from the
//     commit timestamp;
//   - any other group: none.
//
// An offset committed with an explicit expire timestamp expires then
// instead.
func (c *Coordinator) expireGroupOffsetsLocked(g *Group, now time.Time) []record.Record {
	retention := c.cfg.OffsetsRetention
	var candidate func(tp common.TopicPartition) bool
	var base func(v OffsetValue) int64
	switch {
	case g.protocolType != "" && g.state == Empty:
		candidate = func(common.TopicPartition) bool { return true }
		base = func(v OffsetValue) int64 {
			if ts := g.stateTime.UnixMilli(); ts >= 0 {
				return ts
			}
			return v.CommitTimestamp
		}
	case g.protocolType == ConsumerProtocolType && g.state == Stable:
		subs, ok := g.subscribedTopicsLocked()
		if !ok {
			return nil
		}
		candidate = func(tp common.TopicPartition) bool { return !subs[tp.Topic] }
		base = func(v OffsetValue) int64 { return v.CommitTimestamp }
	case g.protocolType == "":
		candidate = func(common.TopicPartition) bool { return true }
		base = func(v OffsetValue) int64 { return v.CommitTimestamp }
	default:
		return nil
	}
	var recs []record.Record
	nowMs := now.UnixMilli()
	for tp, v := range g.offsets {
		if !candidate(tp) || g.inflight[tp] > 0 {
			continue
		}
		expired := nowMs-base(v) >= retention.Milliseconds()
		if v.ExpireTimestamp >= 0 {
			expired = nowMs >= v.ExpireTimestamp
		}
		if !expired {
			continue
		}
		delete(g.offsets, tp)
		delete(g.offsetPos, tp)
		recs = append(recs, offsetTombstone(g.id, tp))
	}
	sortByKey(recs)
	return recs
}

// OnTopicsDeleted removes the committed offsets of deleted topics from
// every loaded group and writes their tombstones (Kafka's
// handleDeletedPartitions). It returns the number of offsets removed.
func (c *Coordinator) OnTopicsDeleted(topics []string) int {
	gone := map[string]bool{}
	for _, t := range topics {
		gone[t] = true
	}
	gs := c.groupsWhere(func(*Group) bool { return true })
	now := c.clock.Now()
	total := 0
	for _, g := range gs {
		g.mu.Lock()
		var recs []record.Record
		if !g.unloaded {
			for tp := range g.offsets {
				if gone[tp.Topic] {
					g.deleteOffsetLocked(tp)
					recs = append(recs, offsetTombstone(g.id, tp))
				}
			}
		}
		if len(recs) > 0 {
			sortByKey(recs)
			total += len(recs)
			c.writeAsyncLocked(g, buildBatch(now, recs), "offsets of deleted topics in "+g.id)
		}
		g.mu.Unlock()
	}
	return total
}
