package replica

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/storage"
)

// Replica ids in Fetch and ListOffsets requests.
const (
	consumerReplicaID  int32 = -1
	debuggingReplicaID int32 = -2
)

// fetchPart is one partition of a fetch, as requested (or as remembered by
// a fetch session).
type fetchPart struct {
	tp                 common.TopicPartition
	topicID            [16]byte
	fetchOffset        int64
	currentLeaderEpoch int32
	lastFetchedEpoch   int32
	logStartOffset     int64 // the follower's log start (v5+), -1 otherwise
	maxBytes           int32
	resolveErr         int16 // e.g. UNKNOWN_TOPIC_ID for an unknown v13 topic id
}

// partRead is the outcome of reading one partition.
type partRead struct {
	code               int16
	hw, lso, logStart  int64
	records            storage.Records
	leaderEpoch        int32 // to notice leadership changes while parked
	divergingEpoch     int32
	divergingEndOffset int64
	hasDivergingEpoch  bool
	aborted            []storage.AbortedTxn
}

func (r *partRead) size() int {
	if r.records == nil {
		return 0
	}
	return r.records.Len()
}

// fetchParams are the request-wide settings of a fetch.
type fetchParams struct {
	version   int16
	replicaID int32
	isolation int8
	maxBytes  int32
	minBytes  int32
	maxWait   time.Duration
}

// Fetch serves consumer and follower fetches ): reads up
// to the high watermark (consumers) or the log end (followers, replica id
// >= 0, and the debugging replica id -2), honours
// max_bytes/partition_max_bytes with KIP-74's "at least one batch",
// long-polls for min_bytes up to max_wait_ms, fences by current leader
// epoch and runs fetch sessions (KIP-227). A follower fetch also tells the
// leader the follower's log end: it may raise the HW, complete acks=all
// produces and expand the ISR.
//
// The response is a *network.FileFetchResponse whose record data are
// storage file ranges; the network layer frames it and sends them with
// sendfile (a plain *kmsg.FetchResponse
// with the data read into memory when Config.DisableSendfile is set or no
// partition returned data).
//
// An error means the connection is going away (ctx cancelled).
func (m *Manager) Fetch(ctx context.Context, req *kmsg.FetchRequest) (kmsg.Response, error) {
	return m.FetchAuthorized(ctx, req, nil)
}

// FetchAuthorized is Fetch with the request path's authorization decision:
// a partition whose topic mayRead rejects answers TOPIC_AUTHORIZATION_FAILED
// and is not read (a follower's position is not recorded). mayRead is
// asked on every request over the partitions it covers — those of the
// session for an incremental fetch — so a revoked ACL takes effect at once;
// nil allows every topic. Denied partitions do not end a long poll early:
// the fetch waits for the others as if they were absent.
func (m *Manager) FetchAuthorized(ctx context.Context, req *kmsg.FetchRequest, mayRead func(topic string) bool) (kmsg.Response, error) {
	return m.FetchInto(ctx, req, mayRead, nil)
}

// FetchInto is FetchAuthorized answering into kept, a connection's
// FetchScratch (nil: fresh memory): the response and every per-partition
// slice of the request come from it, so a steady stream of fetches
// allocates nothing per partition. The response is kept's until written.
func (m *Manager) FetchInto(ctx context.Context, req *kmsg.FetchRequest, mayRead func(topic string) bool, kept *network.FetchScratch) (kmsg.Response, error) {
	sc := scratchOf(kept)
	params := fetchParams{
		version:   req.Version,
		replicaID: req.ReplicaID,
		isolation: req.IsolationLevel,
		maxBytes:  req.MaxBytes,
		minBytes:  req.MinBytes,
		maxWait:   time.Duration(req.MaxWaitMillis) * time.Millisecond,
	}
	if req.Version < 3 || params.maxBytes <= 0 {
		params.maxBytes = math.MaxInt32
	}

	reqParts := m.fetchPartsFromRequest(req, sc.parts[:0])

	session, incremental, code := m.openFetchSession(req, reqParts)
	parts := reqParts
	if code == 0 && session != nil {
		// Held until the response is built; see fetchSession.
		defer session.mu.Unlock()
		if incremental {
			// The request's partitions are in the session now: its
			// whole list replaces them in the same memory.
			parts = session.appendRequestsLocked(reqParts[:0])
		}
	}
	sc.keepParts(parts)
	testFault := params.replicaID < 0 && testFetchFault() != "" // testfault.go
	withFiles := !m.cfg.DisableSendfile && !testFault
	var resp *kmsg.FetchResponse
	var files *network.FileFetchResponse
	if kept != nil {
		resp, files = kept.Response(req.Version, withFiles)
	} else {
		resp = req.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = req.Version
		if withFiles {
			files = network.NewFileFetchResponse(resp)
		}
	}
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	if mayRead != nil {
		// parts is the request's own slice or a copy of the session's, so
		// the session keeps no trace of the decision.
		for i := range parts {
			if parts[i].resolveErr == 0 && !mayRead(parts[i].tp.Topic) {
				parts[i].resolveErr = kerr.TopicAuthorizationFailed.Code
			}
		}
	}

	reads, err := m.fetchWithWait(ctx, parts, params, sc)
	if err != nil {
		return nil, err
	}
	m.metrics.topics.fetched(parts, reads, params.replicaID, m)
	if params.replicaID >= 0 {
		m.recordLeaderReplication(parts, reads)
	}
	if session != nil {
		resp.SessionID = session.id
	}
	m.appendFetchResponseTopics(resp, parts, reads, params, session, incremental, files, sc)
	if testFault {
		applyTestFetchFault(resp)
	}
	if files == nil || !files.HasFiles() {
		return resp, nil
	}
	return files, nil
}

// openFetchSession applies the request's fetch-session fields (v7+; older
// versions are always sessionless):
//
//	id 0, epoch -1      full fetch, no session
//	id 0, epoch 0       full fetch creating a session
//	id n, epoch -1      close session n, full fetch without one
//	id n, epoch 0       close session n, full fetch creating a new one
//	id n, epoch e > 0   incremental fetch in session n, which must expect e
//
// An incremental fetch adds or updates the listed partitions and drops the
// forgotten ones. The session returned (nil for none) is locked; the caller
// unlocks it once the response is built. A non-zero code is the
// request-level error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH).
func (m *Manager) openFetchSession(req *kmsg.FetchRequest, reqParts []fetchPart) (session *fetchSession, incremental bool, code int16) {
	if req.Version < 7 {
		return nil, false, 0
	}
	switch {
	case req.SessionID == 0 && req.SessionEpoch == -1:
		return nil, false, 0
	case req.SessionID == 0 && req.SessionEpoch == 0:
		session = m.sessions.create(reqParts)
	case req.SessionEpoch == -1:
		m.sessions.remove(req.SessionID)
		return nil, false, 0
	case req.SessionEpoch == 0:
		m.sessions.remove(req.SessionID)
		session = m.sessions.create(reqParts)
	default:
		s, ok := m.sessions.get(req.SessionID)
		if !ok {
			return nil, false, kerr.FetchSessionIDNotFound.Code
		}
		s.mu.Lock()
		if s.epoch != req.SessionEpoch {
			s.mu.Unlock()
			return nil, false, kerr.InvalidFetchSessionEpoch.Code
		}
		s.epoch++
		if s.epoch < 1 { // wrap-around, as Kafka's nextEpoch
			s.epoch = 1
		}
		for _, p := range reqParts {
			s.upsertLocked(p)
		}
		for _, ft := range req.ForgottenTopics {
			name := ft.Topic
			if req.Version >= 13 {
				name, _ = m.topicName(ft.TopicID)
			}
			for _, p := range ft.Partitions {
				s.forgetLocked(common.TopicPartition{Topic: name, Partition: p})
			}
		}
		s.touch(m.cfg.Clock())
		return s, true, 0
	}
	if session != nil {
		session.mu.Lock()
	}
	return session, false, 0
}

// appendFetchResponseTopics fills resp with one entry per partition read,
// grouped by topic. In a session every partition's HW, LSO and log start
// are remembered; an incremental response leaves out the partitions with
// nothing new (no error, no data, no diverging epoch, same offsets), and
// the partitions that returned data move to the end of the session's order
// so the next fetch starts with the others.
func (m *Manager) appendFetchResponseTopics(resp *kmsg.FetchResponse, parts []fetchPart, reads []partRead, params fetchParams,
	session *fetchSession, incremental bool, files *network.FileFetchResponse, sc *fetchScratch) {
	var cur *kmsg.FetchResponseTopic
	// Which of the session's partitions (parts is its list, in its order)
	// returned data.
	var returned []bool
	if incremental {
		returned = sc.returnedFor(len(parts))
	}
	// At most one allocation for the topics and one per topic for its
	// partitions, sized for every partition being answered (none when
	// an earlier response on the connection left room).
	if runs := topicRuns(parts); cap(resp.Topics)-len(resp.Topics) < runs {
		resp.Topics = slices.Grow(resp.Topics, runs)
	}
	files.Reserve(len(parts))
	for i := range parts {
		p, r := &parts[i], &reads[i]
		if incremental && r.size() > 0 {
			returned[i] = true
		}
		if session != nil && !session.recordLocked(p.tp, r, incremental, params.version) {
			continue
		}
		if cur == nil || cur.Topic != p.tp.Topic || cur.TopicID != p.topicID {
			cur = network.AppendFetchTopic(resp, runLength(parts[i:]))
			cur.Topic = p.tp.Topic
			cur.TopicID = p.topicID
		}
		sp, file := m.fetchResponsePartition(p, r, params, files != nil)
		cur.Partitions = append(cur.Partitions, sp)
		if file != nil {
			files.SetFileRecords(len(resp.Topics)-1, len(cur.Partitions)-1, file)
		}
	}
	if incremental {
		session.moveToEndLocked(returned)
	}
}

// topicRuns counts the runs of consecutive parts of one topic: the
// topics of the response.
func topicRuns(parts []fetchPart) int {
	n := 0
	for i := range parts {
		if i == 0 || !sameTopic(&parts[i], &parts[i-1]) {
			n++
		}
	}
	return n
}

// runLength is how many parts from the first are of its topic.
func runLength(parts []fetchPart) int {
	n := 1
	for n < len(parts) && sameTopic(&parts[n], &parts[0]) {
		n++
	}
	return n
}

func sameTopic(a, b *fetchPart) bool { return a.tp.Topic == b.tp.Topic && a.topicID == b.topicID }

// fetchPartsFromRequest appends the request's partitions to out.
func (m *Manager) fetchPartsFromRequest(req *kmsg.FetchRequest, out []fetchPart) []fetchPart {
	n := 0
	for _, t := range req.Topics {
		n += len(t.Partitions)
	}
	out = slices.Grow(out, n)
	for _, t := range req.Topics {
		name, id := t.Topic, t.TopicID
		var resolveErr int16
		if req.Version >= 13 {
			n, ok := m.topicName(id)
			if ok {
				name = n
			} else {
				resolveErr = kerr.UnknownTopicID.Code
			}
		} else {
			id = m.topicID(name)
		}
		for _, p := range t.Partitions {
			fp := fetchPart{
				tp:                 common.TopicPartition{Topic: name, Partition: p.Partition},
				topicID:            id,
				fetchOffset:        p.FetchOffset,
				currentLeaderEpoch: -1,
				lastFetchedEpoch:   -1,
				logStartOffset:     -1,
				maxBytes:           p.PartitionMaxBytes,
				resolveErr:         resolveErr,
			}
			if req.Version >= 9 {
				fp.currentLeaderEpoch = p.CurrentLeaderEpoch
			}
			if req.Version >= 12 {
				fp.lastFetchedEpoch = p.LastFetchedEpoch
			}
			if req.Version >= 5 {
				fp.logStartOffset = p.LogStartOffset
			}
			out = append(out, fp)
		}
	}
	return out
}

// fetchWithWait reads every partition and, when the request allows it and
// fewer than min_bytes are available, parks the request in the fetch
// purgatory (DelayedFetch) until it can complete; then
// it reads again and returns what is there.
func (m *Manager) fetchWithWait(ctx context.Context, parts []fetchPart, params fetchParams, sc *fetchScratch) ([]partRead, error) {
	reads, total, hasErr := m.readParts(parts, params, true, &sc.reads)
	if params.maxWait <= 0 || params.minBytes <= 0 || total >= int(params.minBytes) || hasErr || !anyAuthorized(parts) {
		return reads, nil
	}
	select {
	case <-m.done:
		return reads, nil
	default:
	}
	keys := sc.keys[:0]
	for _, p := range parts {
		keys = append(keys, partitionKey(p.tp))
	}
	sc.keys = keys
	op := newDelayedFetch(m, ctx, parts, params, reads, &sc.tries)
	network.LocalDone(ctx) // the wait is Kafka's RemoteTimeMs
	m.fetches.TryCompleteElseWatch(op, params.maxWait, keys...)
	select {
	case <-op.done:
	case <-ctx.Done():
		op.finish()
		// Let the purgatory drop the entry now rather than at its
		// timeout: TryComplete reports true once finished.
		m.fetches.CheckAndComplete(keys[0])
		op.release()
		return nil, ctx.Err()
	}
	// A timeout completes op without its lock: a TryComplete may still
	// be reading parts. Once finish returns none is, and none will.
	op.finish()
	op.release()
	clear(keys)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	reads, _, _ = m.readParts(parts, params, false, &sc.reads)
	return reads, nil
}

// anyAuthorized reports whether some partition was not denied by the
// authorizer (false for none at all): only those are worth waiting for.
func anyAuthorized(parts []fetchPart) bool {
	for i := range parts {
		if parts[i].resolveErr != kerr.TopicAuthorizationFailed.Code {
			return true
		}
	}
	return false
}

func leadershipChanged(a, b []partRead) bool {
	for i := range a {
		if a[i].leaderEpoch != b[i].leaderEpoch {
			return true
		}
	}
	return false
}

// readParts applies the response size limits: each partition at most its
// partition_max_bytes, the response at most max_bytes, and the first
// partition with data at least one whole batch (KIP-74). first is true for
// the read when the request arrives (not the re-reads of a parked fetch):
// only that one updates the leader's view of a follower.
func (m *Manager) readParts(parts []fetchPart, params fetchParams, first bool, into *readBuf) ([]partRead, int, bool) {
	reads, files := into.reset(len(parts)) // files[i] is what reads[i].records point to
	limit := params.maxBytes
	minOne := true
	total := 0
	hasErr := false
	for i := range parts {
		max := min(parts[i].maxBytes, limit)
		reads[i] = m.readPartition(&parts[i], params, readLimits{maxBytes: max, minOneMessage: minOne, updateFollower: first, into: &files[i]})
		if reads[i].code != 0 && parts[i].resolveErr != kerr.TopicAuthorizationFailed.Code {
			hasErr = true
		}
		if n := reads[i].size(); n > 0 {
			minOne = false
			total += n
			limit = max32(0, limit-int32(min(n, math.MaxInt32)))
		}
		if reads[i].hasDivergingEpoch {
			hasErr = true // respond at once, as Kafka does for divergence
		}
	}
	return reads, total, hasErr
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// followerUpdate is what a follower fetch changed on the leader; acted on
// after the partition lock is released.
type followerUpdate struct {
	hwRose    bool
	tryExpand bool
}

// readLimits bounds one partition's read in a fetch.
type readLimits struct {
	maxBytes int32
	// minOneMessage returns a first batch even when it is larger than
	// maxBytes, so a consumer always makes progress (KIP-74).
	minOneMessage bool
	// updateFollower is set for the read when the request arrives (not the
	// re-reads of a parked fetch): only that one records a follower's
	// position on the leader.
	updateFollower bool
	// into, when not nil, holds the file range read (see
	// recordsReaderInto).
	into *storage.FileRecords
}

// recordsReaderInto is implemented by *storage.Log: reading into memory
// the fetch provides (one slice per request) spares an allocation per
// partition read.
type recordsReaderInto interface {
	ReadRecordsInto(dst *storage.FileRecords, startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (storage.Records, error)
}

// readPartition reads one partition, then, with no lock held, acts on what
// a follower's fetch changed: parked requests are woken when the HW rose,
// and the follower may join the ISR.
func (m *Manager) readPartition(fp *fetchPart, params fetchParams, lim readLimits) partRead {
	r, upd := m.readPartitionOnce(fp, params, lim)
	if upd.hwRose {
		m.wakeOnHighWatermark(fp.tp)
	}
	if upd.tryExpand {
		if p, ok := m.Partition(fp.tp); ok {
			m.maybeExpandIsr(p, params.replicaID)
		}
	}
	return r
}

// readPartitionOnce is the read under the partition's read lock: the
// leadership and replica checks, a follower's divergence check and
// position update, then the records up to the fetchable end (the log end
// for followers, the LSO for READ_COMMITTED consumers, the HW otherwise).
func (m *Manager) readPartitionOnce(fp *fetchPart, params fetchParams, lim readLimits) (partRead, followerUpdate) {
	r := partRead{hw: -1, lso: -1, logStart: -1, leaderEpoch: -1}
	var upd followerUpdate
	if fp.resolveErr != 0 {
		r.code = fp.resolveErr
		return r, upd
	}
	if params.version < 4 {
		// Klassik stores only magic-2 batches and does not down-convert.
		r.code = kerr.UnsupportedVersion.Code
		return r, upd
	}
	p, ok := m.Partition(fp.tp)
	if !ok {
		r.code = m.errorCode(m.unknownPartitionError(fp.tp), fp.tp, "fetch")
		return r, upd
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	st, kerrE := p.checkLeaderLocked(fp.currentLeaderEpoch, true)
	if kerrE != nil {
		r.code = kerrE.Code
		return r, upd
	}
	r.leaderEpoch = st.leaderEpoch
	follower := params.replicaID >= 0
	if code := p.checkFetchableLocked(st.log, fp, params); code != 0 {
		r.code = code
		return r, upd
	}
	log := st.log
	hw, leo, logStart := log.HighWatermark(), log.LogEndOffset(), log.LogStartOffset()
	if follower && fp.lastFetchedEpoch >= 0 {
		if code, diverged := divergence(log, fp, logStart, &r); code != 0 || diverged {
			r.code = code
			if diverged {
				r.hw, r.lso, r.logStart = hw, hw, logStart
			}
			return r, upd
		}
	}
	if fp.fetchOffset < logStart || fp.fetchOffset > leo {
		r.code = kerr.OffsetOutOfRange.Code
		return r, upd
	}
	// The last stable offset is the HW lowered to the first offset of the
	// earliest open transaction.
	lso := log.LastStableOffset()
	maxOffset := hw
	switch {
	case follower || params.replicaID == debuggingReplicaID:
		maxOffset = leo
	case params.isolation == 1:
		maxOffset = lso
	}
	r.hw, r.lso, r.logStart = hw, lso, logStart
	if follower && lim.updateFollower {
		// The response still carries the HW from before this update, so
		// the follower learns it one exchange later, as in Kafka.
		upd = p.updateFollowerFetchStateLocked(params.replicaID, fp.fetchOffset, fp.logStartOffset, leo, m.cfg.Clock(), m.cfg.ReplicaLagTimeMax)
	}
	if fp.fetchOffset >= maxOffset || lim.maxBytes <= 0 && !lim.minOneMessage {
		return r, upd
	}
	if follower && m.shouldLeaderThrottleLocked(p, fp.tp, params.replicaID) {
		return r, upd // no records this time; a parked fetch does not count them either
	}
	m.readRecordsLocked(log, fp, params, lim, maxOffset, &r)
	return r, upd
}

// checkFetchableLocked refuses a follower that is not (yet, in this
// leader's view) a replica, and a Fetch below v10 of a zstd topic. Must
// hold p.mu (read).
func (p *Partition) checkFetchableLocked(log Log, fp *fetchPart, params fetchParams) int16 {
	if params.replicaID >= 0 && !containsBroker(p.replicas, params.replicaID) {
		// The leader may not have seen the LeaderAndIsr adding this
		// replica yet.
		if fp.currentLeaderEpoch >= 0 {
			return kerr.UnknownLeaderEpoch.Code
		}
		return kerr.NotLeaderForPartition.Code
	}
	if params.version < 10 && log.CompressionType() == "zstd" {
		// zstd batches need Fetch v10+ (KIP-110); Kafka refuses by topic
		// config rather than by inspecting batches.
		return kerr.UnsupportedCompressionType.Code
	}
	return 0
}

// divergence is the leader's check of a follower's last fetched epoch
// (Fetch v12+): an epoch the leader cannot place, or a fetch offset below
// its log start, is OFFSET_OUT_OF_RANGE; an epoch the leader ended earlier
// than the fetch offset (or does not have) diverged, and r gets the
// leader's largest epoch not above it with its end offset, where the
// follower truncates.
func divergence(log Log, fp *fetchPart, logStart int64, r *partRead) (code int16, diverged bool) {
	e, end := log.EndOffsetForEpoch(fp.lastFetchedEpoch)
	if e == -1 && end == -1 || fp.fetchOffset < logStart {
		return kerr.OffsetOutOfRange.Code, false
	}
	if e < fp.lastFetchedEpoch || end < fp.fetchOffset {
		r.hasDivergingEpoch, r.divergingEpoch, r.divergingEndOffset = true, e, end
		return 0, true
	}
	return 0, false
}

// updateFollowerFetchStateLocked is Kafka's
// Partition.updateFollowerFetchState: a follower's fetch offset is what it
// has, so it becomes the follower's log end (and its caught-up time moves
// per the lastCaughtUp rule); the HW may then rise. Must hold p.mu (read);
// takes remotesMu.
func (p *Partition) updateFollowerFetchStateLocked(replicaID int32, fetchOffset, followerLogStart, leaderLEO int64, now time.Time, lagMax time.Duration) followerUpdate {
	p.remotesMu.Lock()
	defer p.remotesMu.Unlock()
	rr := p.remotes[replicaID]
	if rr == nil {
		rr = newRemoteReplica()
		p.remotes[replicaID] = rr
	}
	rr.updateFetchState(fetchOffset, followerLogStart, now, leaderLEO)
	return followerUpdate{
		hwRose:    p.maybeIncrementHighWatermarkRemotesLocked(p.log, now, lagMax),
		tryExpand: !containsBroker(p.isr, replicaID) && p.pendingIsr == nil,
	}
}

// readRecordsLocked reads the records of one partition into r, with the
// aborted transactions a READ_COMMITTED consumer needs. Must hold p.mu
// (read).
func (m *Manager) readRecordsLocked(log Log, fp *fetchPart, params fetchParams, lim readLimits, maxOffset int64, r *partRead) {
	var recs storage.Records
	var err error
	if into, ok := log.(recordsReaderInto); ok && lim.into != nil {
		recs, err = into.ReadRecordsInto(lim.into, fp.fetchOffset, lim.maxBytes, maxOffset, lim.minOneMessage)
	} else {
		recs, err = log.ReadRecords(fp.fetchOffset, lim.maxBytes, maxOffset, lim.minOneMessage)
	}
	if err != nil {
		r.code = m.errorCode(err, fp.tp, "fetch")
		r.hw, r.lso, r.logStart = -1, -1, -1
		return
	}
	r.records = recs
	if params.isolation == 1 && params.replicaID < 0 && r.size() > 0 {
		// Aborted transactions overlapping what may have been returned;
		// the LSO bounds the data, so it bounds the list too (a superset
		// is harmless: consumers match them against the batches they got).
		txns, err := log.CollectAbortedTransactions(fp.fetchOffset, maxOffset)
		if err != nil {
			r.code = m.errorCode(err, fp.tp, "fetch")
			r.hw, r.lso, r.logStart, r.records = -1, -1, -1, nil
			return
		}
		r.aborted = txns
	}
}

// With fromFile, a partition's records stay a file range, returned as file
// for the network layer to send (sendfile); otherwise they are read into
// RecordBatches.
func (m *Manager) fetchResponsePartition(p *fetchPart, r *partRead, params fetchParams, fromFile bool) (sp kmsg.FetchResponseTopicPartition, file storage.Records) {
	sp = kmsg.NewFetchResponseTopicPartition()
	sp.Partition = p.tp.Partition
	code := r.code
	if code == kerr.KafkaStorageError.Code && params.version <= 5 {
		// Old clients do not know KAFKA_STORAGE_ERROR.
		code = kerr.NotLeaderForPartition.Code
	}
	sp.ErrorCode = code
	sp.HighWatermark = r.hw
	sp.LastStableOffset = r.lso
	sp.LogStartOffset = r.logStart
	sp.PreferredReadReplica = -1
	if params.isolation == 1 {
		sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
		for _, a := range r.aborted {
			at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
			at.ProducerID = a.ProducerID
			at.FirstOffset = a.FirstOffset
			sp.AbortedTransactions = append(sp.AbortedTransactions, at)
		}
	}
	if r.hasDivergingEpoch {
		sp.DivergingEpoch.Epoch = r.divergingEpoch
		sp.DivergingEpoch.EndOffset = r.divergingEndOffset
	}
	// Records are never null on the wire: clients reject a null record set.
	sp.RecordBatches = []byte{}
	if code != 0 || r.size() == 0 {
		return sp, nil
	}
	if fromFile {
		return sp, r.records
	}
	b, err := r.records.ReadAll()
	if err != nil {
		m.log.Error("reading fetched records", "topic", p.tp.Topic, "partition", p.tp.Partition, "err", err)
		sp.ErrorCode = kerr.KafkaStorageError.Code
		if params.version <= 5 {
			sp.ErrorCode = kerr.NotLeaderForPartition.Code
		}
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		return sp, nil
	}
	sp.RecordBatches = b
	return sp, nil
}
