package replica

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/storage"
)

// newStorageManager builds a manager over the real on-disk storage in a
// temporary directory.
func newStorageManager(t testing.TB, mutate func(*Config)) (*Manager, *storage.LogManager, string) {
	t.Helper()
	dir := t.TempDir()
	mc := storage.DefaultManagerConfig(dir)
	mc.Logger = quietLogger()
	lm, err := storage.NewLogManager(mc)
	if err != nil {
		t.Fatalf("log manager: %v", err)
	}
	t.Cleanup(func() { _ = lm.Shutdown() })
	cfg := Config{BrokerID: 1, Logger: quietLogger()}
	if mutate != nil {
		mutate(&cfg)
	}
	cfg.LogConfigFor = func(topic string) (storage.LogConfig, error) {
		c := storage.DefaultLogConfig()
		switch topic {
		case "compacted":
			c.CleanupPolicyCompact, c.CleanupPolicyDelete = true, false
		case "zstd":
			c.CompressionType = "zstd"
		}
		return c, nil
	}
	m := New(cfg, NewLogStore(lm), metadata.New(cfg.BrokerID, "test"))
	t.Cleanup(m.Shutdown)
	return m, lm, dir
}

func TestStorageProduceFetchRoundTrip(t *testing.T) {
	m, lm, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	for i, v := range []string{"a", "b", "c"} {
		r := produceOne(t, m, -1, "t", 0, makeBatch(int64(1000*(i+1)), v))
		if r.ErrorCode != 0 || r.BaseOffset != int64(i) {
			t.Fatalf("produce %d: %+v", i, r)
		}
	}
	raw, err := m.Fetch(context.Background(), fetchReq("t", 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	// With real storage the records stay a segment file range, for the
	// network layer to frame and send with sendfile.
	if fr, ok := raw.(*network.FileFetchResponse); !ok || !fr.HasFiles() {
		t.Fatalf("fetch from file-backed storage should carry file records, got %T", raw)
	}
	fp := onlyFetchPartition(t, decodeFetch(t, raw, 12))
	offs, vals, err := batchValues(fp.RecordBatches)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vals, []string{"b", "c"}) || !slices.Equal(offs, []int64{1, 2}) || fp.HighWatermark != 3 {
		t.Fatalf("fetched %v at %v, hw %d", vals, offs, fp.HighWatermark)
	}
	l, ok := lm.GetLog(common.TopicPartition{Topic: "t", Partition: 0})
	if !ok || l.HighWatermark() != 3 || l.LeaderEpochs().LatestEpoch() != 0 {
		t.Fatalf("storage state: ok=%v hw=%d", ok, l.HighWatermark())
	}

	// A corrupt batch is refused and leaves the log untouched.
	bad := makeBatch(5000, "bad")
	bad[len(bad)-1] ^= 1
	if r := produceOne(t, m, 1, "t", 0, bad); r.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("corrupt batch: %+v", r)
	}
	if l.LogEndOffset() != 3 {
		t.Fatalf("log end %d after a rejected batch", l.LogEndOffset())
	}
	// Disabled sendfile: same data, plain response.
	m.cfg.DisableSendfile = true
	raw, _ = m.Fetch(context.Background(), fetchReq("t", 0, 0))
	if _, ok := raw.(*kmsg.FetchResponse); !ok {
		t.Fatalf("DisableSendfile: got %T", raw)
	}
	_, vals, _ = batchValues(onlyFetchPartition(t, decodeFetch(t, raw, 12)).RecordBatches)
	if !slices.Equal(vals, []string{"a", "b", "c"}) {
		t.Fatalf("in-memory fetch %v", vals)
	}
}

func listOffsetsReq(version int16, topic string, partition int32, ts int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = version
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = partition
	rp.Timestamp = ts
	rp.CurrentLeaderEpoch = -1
	rp.MaxNumOffsets = 10
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestStorageListOffsets(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 2)
	produceOne(t, m, 1, "t", 0, makeBatch(1000, "a", "b")) // offsets 0,1 at ts 1000
	produceOne(t, m, 1, "t", 0, makeBatch(3000, "c"))      // offset 2 at ts 3000
	produceOne(t, m, 1, "t", 0, makeBatch(2000, "d"))      // offset 3 at ts 2000

	cases := []struct {
		name   string
		ts     int64
		offset int64
		rts    int64
		epoch  int32
	}{
		{"earliest", -2, 0, -1, 2},
		{"latest", -1, 4, -1, 2},
		{"max timestamp", -3, 2, 3000, 2},
		{"by timestamp exact", 1000, 0, 1000, 2},
		{"by timestamp between", 1500, 2, 3000, 2},
		{"by timestamp too new", 9000, -1, -1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := m.ListOffsets(context.Background(), listOffsetsReq(7, "t", 0, c.ts))
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.Offset != c.offset || p.Timestamp != c.rts || p.LeaderEpoch != c.epoch {
				t.Fatalf("got code %d offset %d ts %d epoch %d; want offset %d ts %d epoch %d",
					p.ErrorCode, p.Offset, p.Timestamp, p.LeaderEpoch, c.offset, c.rts, c.epoch)
			}
		})
	}

	// v0 old-style offsets.
	resp := m.ListOffsets(context.Background(), listOffsetsReq(0, "t", 0, -1))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || !slices.Equal(p.OldStyleOffsets, []int64{4, 0}) {
		t.Fatalf("v0 latest: %+v", p)
	}
	// Fencing, unknown partition, duplicates.
	fenced := listOffsetsReq(4, "t", 0, -1)
	fenced.Topics[0].Partitions[0].CurrentLeaderEpoch = 1
	if c := m.ListOffsets(context.Background(), fenced).Topics[0].Partitions[0].ErrorCode; c != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("fenced: %d", c)
	}
	if c := m.ListOffsets(context.Background(), listOffsetsReq(7, "nope", 0, -1)).Topics[0].Partitions[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown: %d", c)
	}
	dup := listOffsetsReq(7, "t", 0, -1)
	dup.Topics[0].Partitions = append(dup.Topics[0].Partitions, dup.Topics[0].Partitions[0])
	for _, p := range m.ListOffsets(context.Background(), dup).Topics[0].Partitions {
		if p.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("duplicate partition: %d", p.ErrorCode)
		}
	}
}

func TestStorageOffsetForLeaderEpoch(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 1)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a", "b")) // epoch 1: [0, 2)
	makeLeader(t, m, "t", 0, 3)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "c")) // epoch 3: [2, 3)

	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = 4
	req.ReplicaID = -2
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "t"
	for _, e := range []int32{3, 2, 1, 0, 7, -1} {
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition = 0
		rp.CurrentLeaderEpoch = -1
		rp.LeaderEpoch = e
		rt.Partitions = append(rt.Partitions, rp)
	}
	fenced := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	fenced.CurrentLeaderEpoch = 2
	fenced.LeaderEpoch = 1
	rt.Partitions = append(rt.Partitions, fenced)
	req.Topics = append(req.Topics, rt)
	resp := m.OffsetForLeaderEpoch(context.Background(), req)
	type want struct {
		code  int16
		epoch int32
		end   int64
	}
	wants := []want{
		{0, 3, 3},   // latest epoch → log end
		{0, 1, 2},   // between: largest epoch <= 2 is 1, ends where 3 starts
		{0, 1, 2},   // epoch 1 ends at 2
		{0, 0, 0},   // below every cached epoch: (requested, first start)
		{0, -1, -1}, // above every epoch
		{0, -1, -1}, // -1
		{kerr.FencedLeaderEpoch.Code, -1, -1},
	}
	for i, w := range wants {
		p := resp.Topics[0].Partitions[i]
		if p.ErrorCode != w.code || p.LeaderEpoch != w.epoch || p.EndOffset != w.end {
			t.Errorf("case %d: got (%d, %d, %d), want %+v", i, p.ErrorCode, p.LeaderEpoch, p.EndOffset, w)
		}
	}
}

func TestStorageDeleteRecords(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	makeLeader(t, m, "compacted", 0, 0)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a", "b", "c"))

	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = 2
	add := func(topic string, off int64) { addDeleteRecordsTopic(req, topic, off) }
	add("t", 2)
	add("t", 9)
	add("compacted", 0)
	add("nope", 0)
	add("__consumer_offsets", 0)
	resp := m.DeleteRecords(context.Background(), req)
	wants := []struct {
		code int16
		low  int64
	}{{0, 2}, {kerr.OffsetOutOfRange.Code, -1}, {kerr.PolicyViolation.Code, -1}, {kerr.UnknownTopicOrPartition.Code, -1}, {kerr.InvalidTopicException.Code, -1}}
	for i, w := range wants {
		p := resp.Topics[i].Partitions[0]
		if p.ErrorCode != w.code || p.LowWatermark != w.low {
			t.Errorf("case %d: got (%d, %d) want %+v", i, p.ErrorCode, p.LowWatermark, w)
		}
	}
	// The new log start is visible to fetch and ListOffsets.
	if fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 1))); fp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch below the new log start: %d", fp.ErrorCode)
	}
	if p := m.ListOffsets(context.Background(), listOffsetsReq(7, "t", 0, -2)).Topics[0].Partitions[0]; p.Offset != 2 {
		t.Fatalf("earliest after DeleteRecords: %d", p.Offset)
	}
}

func TestStorageStopReplicaDeletesLog(t *testing.T) {
	m, lm, dir := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a"))
	if _, err := os.Stat(filepath.Join(dir, "t-0")); err != nil {
		t.Fatalf("log dir missing: %v", err)
	}
	resp := m.StopReplica(context.Background(), stopReplicaReq(3, "t", -2, true, 0))
	if resp.ErrorCode != 0 || len(resp.Partitions) != 1 || resp.Partitions[0].ErrorCode != 0 {
		t.Fatalf("StopReplica: %+v", resp)
	}
	if _, ok := m.Partition(common.TopicPartition{Topic: "t", Partition: 0}); ok {
		t.Fatal("partition still hosted")
	}
	if _, ok := lm.GetLog(common.TopicPartition{Topic: "t", Partition: 0}); ok {
		t.Fatal("log still open in the log manager")
	}
	if _, err := os.Stat(filepath.Join(dir, "t-0")); !os.IsNotExist(err) {
		t.Fatalf("log dir t-0 still present (err %v)", err)
	}
	if r := produceOne(t, m, 1, "t", 0, makeBatch(1, "x")); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce after delete: %d", r.ErrorCode)
	}
}

func TestStorageIdempotentProduce(t *testing.T) {
	m, lm, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	l, _ := lm.GetLog(common.TopicPartition{Topic: "t", Partition: 0})

	if r := produceOne(t, m, -1, "t", 0, makeProducerBatch(42, 0, 0, 1, "a", "b")); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("first batch: %+v", r)
	}
	if r := produceOne(t, m, -1, "t", 0, makeProducerBatch(42, 0, 2, 1, "c")); r.ErrorCode != 0 || r.BaseOffset != 2 {
		t.Fatalf("second batch: %+v", r)
	}
	// A retry of the first batch is answered with its original offset and
	// not appended again.
	if r := produceOne(t, m, -1, "t", 0, makeProducerBatch(42, 0, 0, 1, "a", "b")); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("duplicate batch: %+v", r)
	}
	if l.LogEndOffset() != 3 {
		t.Fatalf("log end %d after a duplicate", l.LogEndOffset())
	}
	// A gap in the sequence.
	if r := produceOne(t, m, -1, "t", 0, makeProducerBatch(42, 0, 9, 1, "z")); r.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("sequence gap: %+v", r)
	}
}

func TestStorageZstdTopicNeedsFetchV10(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "zstd", 0, 0)
	fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("zstd", 0, 0, func(r *kmsg.FetchRequest) { r.Version = 9 })))
	if fp.ErrorCode != kerr.UnsupportedCompressionType.Code {
		t.Fatalf("Fetch v9 of a zstd topic: %d", fp.ErrorCode)
	}
	fp = onlyFetchPartition(t, doFetch(t, m, fetchReq("zstd", 0, 0, func(r *kmsg.FetchRequest) { r.Version = 10 })))
	if fp.ErrorCode != 0 {
		t.Fatalf("Fetch v10 of a zstd topic: %d", fp.ErrorCode)
	}
}

func TestStorageReadLocalLog(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "__consumer_offsets", 3, 0)
	tp := common.TopicPartition{Topic: "__consumer_offsets", Partition: 3}
	for i := 0; i < 5; i++ {
		if _, err := m.AppendToLocalLog(tp, makeBatch(int64(i), "k"+string(rune('0'+i)), "v"), -1); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := m.ReadLocalLog(context.Background(), tp, 4, func(batch []byte) error {
		offs, vals, err := batchValues(batch)
		if err != nil {
			return err
		}
		for i := range vals {
			got = append(got, vals[i]+"@"+strconv.FormatInt(offs[i], 10))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Batches are whole: reading from offset 4 starts with the batch [4, 5].
	want := []string{"k2@4", "v@5", "k3@6", "v@7", "k4@8", "v@9"}
	if !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	if err := m.ReadLocalLog(context.Background(), common.TopicPartition{Topic: "nope", Partition: 0}, 0, func([]byte) error { return nil }); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown partition: %v", err)
	}
}

// The storage log owns the HW: a leader's raise never lowers it, is
// clamped to the log end, and only truncation moves it back.
func TestStorageHighWatermarkOnlyRisesExceptByTruncation(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	for i := 0; i < 4; i++ {
		produceOne(t, m, -1, "t", 0, makeBatch(int64(i), "v"))
	}
	l := mustPartition(t, m, common.TopicPartition{Topic: "t", Partition: 0}).Log()
	if hw := l.HighWatermark(); hw != 4 {
		t.Fatalf("HW after 4 appends with ISR {leader}: %d", hw)
	}
	if l.MaybeIncrementHighWatermark(2) || l.HighWatermark() != 4 {
		t.Fatalf("a lower candidate moved the HW to %d", l.HighWatermark())
	}
	if l.MaybeIncrementHighWatermark(100) || l.HighWatermark() != 4 {
		t.Fatalf("a candidate past the log end moved the HW to %d", l.HighWatermark())
	}
	if err := l.TruncateTo(1); err != nil {
		t.Fatal(err)
	}
	if hw := l.HighWatermark(); hw != 1 {
		t.Fatalf("HW after truncating to 1: %d", hw)
	}
}
