package network

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The decoders of decodedata.go must give, for every version and input,
// what kmsg's UnsafeReadFrom gives into a fresh struct: the same
// error-or-not and, without error, an equal struct, whatever the kept
// struct and pools held before.

func uuidOf(b byte) (u [16]byte) {
	for i := range u {
		u[i] = b + byte(i)
	}
	return u
}

func withTags(kv ...any) kmsg.Tags {
	var t kmsg.Tags
	for i := 0; i < len(kv); i += 2 {
		t.Set(kv[i].(uint32), kv[i+1].([]byte))
	}
	return t
}

// produceSample builds a Produce request of version v that sets only
// fields v carries, so that decoding its encoding must give it back.
// shape 0 has no topics, 1 one topic of one partition, 2 several topics
// (one without partitions) with null, empty and non-empty records, a
// transactional id and, when flexible, unknown tags at every level.
func produceSample(v int16, shape int) *kmsg.ProduceRequest {
	p := kmsg.NewPtrProduceRequest()
	p.Version = v
	p.Acks = 1
	flexible := v >= 9
	topic := func(name string, id byte) kmsg.ProduceRequestTopic {
		t := kmsg.NewProduceRequestTopic()
		if v <= 12 {
			t.Topic = name
		} else {
			t.TopicID = uuidOf(id)
		}
		return t
	}
	switch shape {
	case 1:
		t := topic("orders", 1)
		t.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 3, Records: []byte{1, 2, 3, 4}}}
		p.Topics = append(p.Topics, t)
	case 2:
		p.Acks, p.TimeoutMillis = -1, 30000
		if v >= 3 {
			txn := "txn-1"
			p.TransactionID = &txn
		}
		for i, n := range []int{3, 0, 1, 5} {
			t := topic(fmt.Sprintf("topic-%d", i), byte(16*i))
			for j := 0; j < n; j++ {
				tp := kmsg.ProduceRequestTopicPartition{Partition: int32(j * 2)}
				switch j % 3 {
				case 0:
					tp.Records = bytes.Repeat([]byte{byte(i), byte(j)}, 20+j)
				case 1:
					tp.Records = []byte{}
				}
				if flexible && j == 1 {
					tp.UnknownTags = withTags(uint32(3), []byte{9}, uint32(40), []byte{})
				}
				t.Partitions = append(t.Partitions, tp)
			}
			if flexible && i == 2 {
				t.UnknownTags = withTags(uint32(1), []byte{7, 7})
			}
			p.Topics = append(p.Topics, t)
		}
		if flexible {
			p.UnknownTags = withTags(uint32(200), []byte("x"))
		}
	}
	return p
}

// fetchSample is produceSample for Fetch: shape 0 has no topics, 1 is a
// consumer's fetch of one partition, 2 a follower's of several topics
// with forgotten topics, rack, cluster id, replica state and per-partition
// tagged fields (known and unknown) where v carries them, 3 a fetch with
// an empty, non-null cluster id and an empty forgotten topic.
func fetchSample(v int16, shape int) *kmsg.FetchRequest {
	f := kmsg.NewPtrFetchRequest()
	f.Version = v
	f.MaxWaitMillis, f.MinBytes = 500, 1
	flexible := v >= 12
	topic := func(name string, id byte) kmsg.FetchRequestTopic {
		t := kmsg.NewFetchRequestTopic()
		if v <= 12 {
			t.Topic = name
		} else {
			t.TopicID = uuidOf(id)
		}
		return t
	}
	part := func(p int32) kmsg.FetchRequestTopicPartition {
		tp := kmsg.NewFetchRequestTopicPartition()
		tp.Partition, tp.FetchOffset, tp.PartitionMaxBytes = p, 1000+int64(p), 1<<20
		if v >= 9 {
			tp.CurrentLeaderEpoch = 5
		}
		if v >= 12 {
			tp.LastFetchedEpoch = 4
		}
		if v >= 5 {
			tp.LogStartOffset = 17
		}
		return tp
	}
	forgotten := func(name string, id byte, parts ...int32) kmsg.FetchRequestForgottenTopic {
		t := kmsg.NewFetchRequestForgottenTopic()
		if v <= 12 {
			t.Topic = name
		} else {
			t.TopicID = uuidOf(id)
		}
		t.Partitions = parts
		return t
	}
	switch shape {
	case 1:
		t := topic("orders", 1)
		t.Partitions = append(t.Partitions, part(0))
		f.Topics = append(f.Topics, t)
	case 2:
		if v <= 14 {
			f.ReplicaID = 2
		}
		if v >= 3 {
			f.MaxBytes = 50 << 20
		}
		if v >= 4 {
			f.IsolationLevel = 1
		}
		if v >= 7 {
			f.SessionID, f.SessionEpoch = 9, 4
		}
		for i, n := range []int{2, 0, 4} {
			t := topic(fmt.Sprintf("topic-%d", i), byte(16*i))
			for j := 0; j < n; j++ {
				tp := part(int32(j))
				if flexible && j == 1 {
					tp.ReplicaDirectoryID = uuidOf(99)
					tp.HighWatermark = 77
					tp.UnknownTags = withTags(uint32(5), []byte{1, 2})
				}
				t.Partitions = append(t.Partitions, tp)
			}
			if flexible && i == 0 {
				t.UnknownTags = withTags(uint32(2), []byte{3})
			}
			f.Topics = append(f.Topics, t)
		}
		if v >= 7 {
			f.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{
				forgotten("gone", 40, 1, 2, 3),
				forgotten("gone-too", 50),
			}
			if flexible {
				f.ForgottenTopics[0].UnknownTags = withTags(uint32(8), []byte{8})
			}
		}
		if v >= 11 {
			f.Rack = "rack-a"
		}
		if flexible {
			cluster := "cluster-1"
			f.ClusterID = &cluster
			f.ReplicaState.ID, f.ReplicaState.Epoch = 2, 8
			f.ReplicaState.UnknownTags = withTags(uint32(4), []byte{4})
			f.UnknownTags = withTags(uint32(2), []byte("top"), uint32(300), []byte{})
		}
	case 3:
		t := topic("t", 3)
		t.Partitions = append(t.Partitions, part(7))
		f.Topics = append(f.Topics, t)
		if v >= 7 {
			f.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{forgotten("", 0)}
		}
		if flexible {
			empty := ""
			f.ClusterID = &empty
		}
	}
	return f
}

const produceShapes, fetchShapes = 3, 4

// checkDecoded fails t when got/gotErr differ from what kmsg's
// UnsafeReadFrom gives for body into a fresh struct.
func checkDecoded[R kmsg.Request](t *testing.T, got R, gotErr error, fresh R, body []byte) {
	t.Helper()
	wantErr := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("kmsg panicked: %v", p) // decodeRequestInto's answer too
			}
		}()
		return readUnsafe(fresh, body)
	}()
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("v%d % x: error %v, kmsg's %v", fresh.GetVersion(), body, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, fresh) {
		t.Fatalf("v%d % x:\n got %+v\nkmsg %+v", fresh.GetVersion(), body, got, fresh)
	}
}

func readUnsafe(r kmsg.Request, body []byte) error {
	switch r := r.(type) {
	case *kmsg.ProduceRequest:
		return r.UnsafeReadFrom(body)
	case *kmsg.FetchRequest:
		return r.UnsafeReadFrom(body)
	}
	panic(fmt.Sprintf("readUnsafe: %T", r))
}

// decodeAsConn decodes body as a connection does: into s's kept struct,
// through decodeReused.
func decodeAsConn[R kmsg.Request](s *connScratch, key, ver int16, body []byte) (R, error) {
	r, err := s.decodeReused(key, ver, body)
	if err != nil {
		var zero R
		return zero, err
	}
	return r.(R), nil
}

func TestDecodersKnowKmsgVersions(t *testing.T) {
	// A kmsg that knows a newer version may have added fields: read its
	// generated.go, teach decodedata.go and raise these.
	if m := kmsg.NewPtrProduceRequest().MaxVersion(); m != produceDecodedMax {
		t.Errorf("kmsg's Produce goes to v%d, the decoder to v%d", m, produceDecodedMax)
	}
	if m := kmsg.NewPtrFetchRequest().MaxVersion(); m != fetchDecodedMax {
		t.Errorf("kmsg's Fetch goes to v%d, the decoder to v%d", m, fetchDecodedMax)
	}
}

// TestDecodeProduceRoundTrip decodes every sample of every version, after
// every other sample of every version on the same connection, and expects
// the sample back, what kmsg decodes, and the same encoding.
func TestDecodeProduceRoundTrip(t *testing.T) {
	roundTripAfterEveryOther(t, 0, produceDecodedMax, produceShapes, produceSample,
		func(v int16) *kmsg.ProduceRequest { return &kmsg.ProduceRequest{Version: v} })
}

// TestDecodeFetchRoundTrip is TestDecodeProduceRoundTrip for Fetch.
func TestDecodeFetchRoundTrip(t *testing.T) {
	roundTripAfterEveryOther(t, 1, fetchDecodedMax, fetchShapes, fetchSample,
		func(v int16) *kmsg.FetchRequest { return &kmsg.FetchRequest{Version: v} })
}

// roundTripAfterEveryOther is the round trip of the request of key: every
// shape of every version up to max, each decoded on a connection that has
// just decoded another (every shape of every version).
func roundTripAfterEveryOther[R kmsg.Request](t *testing.T, key, max int16, shapes int, sample func(int16, int) R, fresh func(int16) R) {
	t.Helper()
	for v := int16(0); v <= max; v++ {
		for shape := 0; shape < shapes; shape++ {
			want := sample(v, shape)
			body := want.AppendTo(nil)
			for pv := int16(0); pv <= max; pv++ {
				for ps := 0; ps < shapes; ps++ {
					var s connScratch
					if _, err := decodeAsConn[R](&s, key, pv, sample(pv, ps).AppendTo(nil)); err != nil {
						t.Fatalf("prior v%d shape %d: %v", pv, ps, err)
					}
					got, err := decodeAsConn[R](&s, key, v, body)
					if err != nil {
						t.Fatalf("v%d shape %d: %v", v, shape, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("v%d shape %d after v%d shape %d:\n got %+v\nwant %+v", v, shape, pv, ps, got, want)
					}
					if enc := got.AppendTo(nil); !bytes.Equal(enc, body) {
						t.Fatalf("v%d shape %d encodes again as % x, was % x", v, shape, enc, body)
					}
					checkDecoded(t, got, nil, fresh(v), body)
				}
			}
		}
	}
}

// TestDecodeTruncated cuts every sample's encoding at every length: each
// cut must fail or succeed exactly as kmsg does, and equal kmsg's struct
// when it succeeds.
func TestDecodeTruncated(t *testing.T) {
	var s connScratch
	for v := int16(0); v <= fetchDecodedMax; v++ {
		for shape := 0; shape < fetchShapes; shape++ {
			body := fetchSample(v, shape).AppendTo(nil)
			for n := 0; n < len(body); n++ {
				got, err := decodeAsConn[*kmsg.FetchRequest](&s, 1, v, body[:n])
				checkDecoded(t, got, err, &kmsg.FetchRequest{Version: v}, body[:n])
			}
		}
	}
	for v := int16(0); v <= produceDecodedMax; v++ {
		for shape := 0; shape < produceShapes; shape++ {
			body := produceSample(v, shape).AppendTo(nil)
			for n := 0; n < len(body); n++ {
				got, err := decodeAsConn[*kmsg.ProduceRequest](&s, 0, v, body[:n])
				checkDecoded(t, got, err, &kmsg.ProduceRequest{Version: v}, body[:n])
			}
		}
	}
}

// TestDecodeOddInputs covers what the samples do not: repeated and short
// tagged fields, negative and wrapped array counts, oversized lengths.
func TestDecodeOddInputs(t *testing.T) {
	fetchHead := func() []byte { // v12: fixed fields, no topics, no forgotten topics, empty rack
		return []byte{
			0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, // replica .. session epoch
			1, 1, 1, // topics, forgotten, rack
		}
	}
	cases := []struct {
		name string
		key  int16
		ver  int16
		body []byte
	}{
		{"fetch cluster id twice, then null", 1, 12, append(fetchHead(), 2, 0, 2, 2, 'a', 0, 1, 0)},
		{"fetch cluster id with trailing bytes", 1, 12, append(fetchHead(), 1, 0, 4, 2, 'a', 7, 7)},
		{"fetch cluster id short", 1, 12, append(fetchHead(), 1, 0, 1, 3)},
		{"fetch replica state twice", 1, 12, append(fetchHead(), 2,
			1, 13, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0,
			1, 14, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4, 1, 6, 0)},
		{"fetch replica state short", 1, 12, append(fetchHead(), 1, 1, 4, 0, 0, 0, 1)},
		{"fetch unknown tag twice", 1, 12, append(fetchHead(), 2, 9, 1, 'x', 9, 0)},
		{"fetch tag count beyond bytes", 1, 12, append(fetchHead(), 5, 9, 0)},
		{"fetch tag size beyond bytes", 1, 12, append(fetchHead(), 1, 9, 100, 1)},
		{"fetch five-byte uvarint too large", 1, 12, append(fetchHead(), 1, 9, 0x80, 0x80, 0x80, 0x80, 0x10)},
		{"fetch five-byte uvarint", 1, 12, append(fetchHead(), 1, 9, 0x80, 0x80, 0x80, 0x80, 0x0f)},
		{"fetch topic count wrapping negative", 1, 12, []byte{
			0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0x81, 0x80, 0x80, 0x80, 0x08, 1, 1, 0}},
		{"fetch topic count wrapping to max", 1, 12, []byte{
			0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0x80, 0x80, 0x80, 0x80, 0x08, 1, 1, 0}},
		{"fetch v4 negative topic count", 1, 4, []byte{
			0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0xff, 0xff, 0xff, 0xfe}},
		{"fetch v4 huge topic count", 1, 4, []byte{
			0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0}},
		{"fetch v4 null topic name", 1, 4, []byte{
			0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0}},
		{"fetch partition count below the per-partition minimum", 1, 4, []byte{
			0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 2,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"produce v2 negative records length", 0, 2, []byte{
			0, 1, 0, 0, 0, 9, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf0}},
		{"produce v3 negative transactional id length", 0, 3, []byte{
			0xff, 0xf0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0}},
		{"produce v9 null topic name", 0, 9, []byte{0, 0, 1, 0, 0, 0, 9, 2, 0, 1, 0, 0}},
		{"produce v9 null records", 0, 9, []byte{0, 0, 1, 0, 0, 0, 9, 2, 2, 't', 2, 0, 0, 0, 1, 0, 0, 0, 0}},
		{"produce v9 trailing bytes", 0, 9, []byte{0, 0, 1, 0, 0, 0, 9, 1, 0, 0xee}},
		{"produce v13 topic count over the uuid minimum", 0, 13, []byte{0, 0, 1, 0, 0, 0, 9, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s connScratch
			if c.key == 0 {
				decodeAsConn[*kmsg.ProduceRequest](&s, 0, 2, produceSample(2, 2).AppendTo(nil))
				got, err := decodeAsConn[*kmsg.ProduceRequest](&s, 0, c.ver, c.body)
				checkDecoded(t, got, err, &kmsg.ProduceRequest{Version: c.ver}, c.body)
				return
			}
			decodeAsConn[*kmsg.FetchRequest](&s, 1, 12, fetchSample(12, 2).AppendTo(nil))
			got, err := decodeAsConn[*kmsg.FetchRequest](&s, 1, c.ver, c.body)
			checkDecoded(t, got, err, &kmsg.FetchRequest{Version: c.ver}, c.body)
		})
	}
}

// TestDecodeAllocatesNothing: once a connection has decoded a request
// shape, decoding it again allocates nothing (no unknown tags: keeping
// those costs a map, as with kmsg).
func TestDecodeAllocatesNothing(t *testing.T) {
	for _, c := range []struct {
		key  int16
		req  kmsg.Request
		name string
	}{
		{0, withoutUnknownTags(produceSample(9, 2)), "produce v9"},
		{0, withoutUnknownTags(produceSample(3, 2)), "produce v3"},
		{1, withoutUnknownTags(fetchSample(12, 2)), "fetch v12"},
		{1, withoutUnknownTags(fetchSample(13, 2)), "fetch v13"},
		{1, withoutUnknownTags(fetchSample(11, 2)), "fetch v11"},
	} {
		var s connScratch
		body := c.req.AppendTo(nil)
		ver := c.req.GetVersion()
		if _, err := s.decodeReused(c.key, ver, body); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() {
			if _, err := s.decodeReused(c.key, ver, body); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per decoding", c.name, n)
		}
	}
}

// withoutUnknownTags drops r's unknown tagged fields.
func withoutUnknownTags(r kmsg.Request) kmsg.Request {
	switch r := r.(type) {
	case *kmsg.ProduceRequest:
		r.UnknownTags = kmsg.Tags{}
		for i := range r.Topics {
			t := &r.Topics[i]
			t.UnknownTags = kmsg.Tags{}
			for j := range t.Partitions {
				t.Partitions[j].UnknownTags = kmsg.Tags{}
			}
		}
	case *kmsg.FetchRequest:
		r.UnknownTags = kmsg.Tags{}
		r.ReplicaState.UnknownTags = kmsg.Tags{}
		for i := range r.Topics {
			t := &r.Topics[i]
			t.UnknownTags = kmsg.Tags{}
			for j := range t.Partitions {
				t.Partitions[j].UnknownTags = kmsg.Tags{}
			}
		}
		for i := range r.ForgottenTopics {
			r.ForgottenTopics[i].UnknownTags = kmsg.Tags{}
		}
	}
	return r
}

// TestDecodeKeepsBoundedMemory: the pools never keep more than
// keptFetchPartitionsMax elements, and after a smaller request nothing of
// a larger one stays reachable from them.
func TestDecodeKeepsBoundedMemory(t *testing.T) {
	manyParts := func(topics, parts int) *kmsg.FetchRequest {
		f := kmsg.NewPtrFetchRequest()
		f.Version = 12
		for i := 0; i < topics; i++ {
			t := kmsg.FetchRequestTopic{Topic: fmt.Sprint("t", i)}
			for j := 0; j < parts; j++ {
				tp := kmsg.NewFetchRequestTopicPartition()
				tp.Partition = int32(j)
				t.Partitions = append(t.Partitions, tp)
			}
			f.Topics = append(f.Topics, t)
		}
		return f
	}
	var s connScratch
	d := &s.fetchDec
	for _, r := range []*kmsg.FetchRequest{
		manyParts(1, keptFetchPartitionsMax+1), // one topic beyond the bound
		manyParts(3, keptFetchPartitionsMax/2), // several topics beyond it in all
		manyParts(keptFetchPartitionsMax+2, 0), // topics beyond it
		manyParts(2, 1000),
		manyParts(1, 3),
	} {
		got, err := decodeAsConn[*kmsg.FetchRequest](&s, 1, 12, r.AppendTo(nil))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Topics) != len(r.Topics) {
			t.Fatalf("%d topics, want %d", len(got.Topics), len(r.Topics))
		}
		if c := cap(d.parts.s); c > keptFetchPartitionsMax {
			t.Fatalf("partition pool keeps %d", c)
		}
		if c := cap(d.topics.s); c > keptFetchPartitionsMax {
			t.Fatalf("topic pool keeps %d", c)
		}
	}
	// The last request used 3 partitions of the pool; the 2000 before
	// them were zeroed.
	rest := d.parts.s[len(d.parts.s):cap(d.parts.s)]
	for i := range rest {
		if !reflect.DeepEqual(rest[i], kmsg.FetchRequestTopicPartition{}) {
			t.Fatalf("pool element %d beyond the request holds %+v", len(d.parts.s)+i, rest[i])
		}
	}
	topics := d.topics.s[len(d.topics.s):cap(d.topics.s)]
	for i := range topics {
		if topics[i].Topic != "" || topics[i].Partitions != nil {
			t.Fatalf("topic pool element %d beyond the request holds %+v", len(d.topics.s)+i, topics[i])
		}
	}
}

// fuzzPriors are the requests a fuzzed body's connection decoded before
// it: every sample of every version.
func fuzzPriors[R kmsg.Request](max int16, shapes int, sample func(int16, int) R) (vers []int16, bodies [][]byte) {
	for v := int16(0); v <= max; v++ {
		for s := 0; s < shapes; s++ {
			vers = append(vers, v)
			bodies = append(bodies, sample(v, s).AppendTo(nil))
		}
	}
	return vers, bodies
}

// FuzzDecodeProduce decodes arbitrary bytes as a Produce body of an
// arbitrary version on a connection that decoded another request before
// (prior picks it), twice, and compares each with kmsg's UnsafeReadFrom
// into a fresh struct.
func FuzzDecodeProduce(f *testing.F) {
	vers, bodies := fuzzPriors(produceDecodedMax, produceShapes, produceSample)
	for i := range bodies {
		f.Add(vers[i], uint8(len(bodies)-1-i), bodies[i])
	}
	f.Fuzz(func(t *testing.T, ver int16, prior uint8, body []byte) {
		var s connScratch
		i := int(prior) % len(bodies)
		if _, err := s.decodeReused(0, vers[i], bodies[i]); err != nil {
			t.Fatalf("prior %d: %v", i, err)
		}
		for range 2 {
			got, err := decodeAsConn[*kmsg.ProduceRequest](&s, 0, ver, body)
			checkDecoded(t, got, err, &kmsg.ProduceRequest{Version: ver}, body)
		}
	})
}

// FuzzDecodeFetch is FuzzDecodeProduce for Fetch.
func FuzzDecodeFetch(f *testing.F) {
	vers, bodies := fuzzPriors(fetchDecodedMax, fetchShapes, fetchSample)
	for i := range bodies {
		f.Add(vers[i], uint8(len(bodies)-1-i), bodies[i])
	}
	f.Fuzz(func(t *testing.T, ver int16, prior uint8, body []byte) {
		var s connScratch
		i := int(prior) % len(bodies)
		if _, err := s.decodeReused(1, vers[i], bodies[i]); err != nil {
			t.Fatalf("prior %d: %v", i, err)
		}
		for range 2 {
			got, err := decodeAsConn[*kmsg.FetchRequest](&s, 1, ver, body)
			checkDecoded(t, got, err, &kmsg.FetchRequest{Version: ver}, body)
		}
	})
}
