package group

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/common/hextest"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name (hex, one value per file).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	hextest.Golden(t, filepath.Join("testdata", name), got, *update)
}

// Example bytes of an offset commit key v1 and value v3 as Kafka writes
// them (kmsg's OffsetCommitKey/OffsetCommitValue encode the same).
func TestSpecExampleBytes(t *testing.T) {
	key := EncodeOffsetKey(OffsetKey{Version: 1, Group: "g1", Topic: "t", Partition: 0})
	if want := hextest.Decode(t, "0001 00026731 000174 00000000"); !bytes.Equal(key, want) {
		t.Errorf("offset key %x, want %x", key, want)
	}
	val := EncodeOffsetValue(OffsetValue{Version: 3, Offset: 42, LeaderEpoch: 0, CommitTimestamp: 1700000000000})
	if want := hextest.Decode(t, "0003 000000000000002a 00000000 0000 0000018bcfe56800"); !bytes.Equal(val, want) {
		t.Errorf("offset value %x, want %x", val, want)
	}
	if got, want := EncodeGroupKey("g1"), hextest.Decode(t, "0002 00026731"); !bytes.Equal(got, want) {
		t.Errorf("group key %x, want %x", got, want)
	}
	golden(t, "spec_offset_key_v1.hex", key)
	golden(t, "spec_offset_value_v3.hex", val)
	golden(t, "spec_group_key_v2.hex", EncodeGroupKey("g1"))
}

func sampleGroupValue(version int16) GroupValue {
	proto, leader, inst := "range", "c-1", "i-1"
	v := GroupValue{Version: version, ProtocolType: "consumer", Generation: 3, Protocol: &proto, Leader: &leader,
		CurrentStateTimestamp: -1,
		Members: []MemberValue{
			{MemberID: "c-1", ClientID: "c", ClientHost: "/127.0.0.1", RebalanceTimeout: 60000, SessionTimeout: 10000,
				Subscription: []byte{0, 0, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff}, Assignment: []byte{1, 2}},
			{MemberID: "c-2", InstanceID: &inst, ClientID: "c", ClientHost: "/127.0.0.2", RebalanceTimeout: 60000,
				SessionTimeout: 10000, Subscription: []byte{}, Assignment: []byte{}},
		}}
	if version >= 2 {
		v.CurrentStateTimestamp = 1700000000000
	}
	if version < 3 {
		v.Members[1].InstanceID = nil
	}
	if version == 0 {
		for i := range v.Members {
			v.Members[i].RebalanceTimeout = v.Members[i].SessionTimeout
		}
	}
	return v
}

// Our encoding must equal kmsg's (Kafka's generated schema) for every
// version we write or read, and decode back to the same value.
func TestCodecsMatchKmsg(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		ov := OffsetValue{Version: v, Offset: 7, LeaderEpoch: -1, Metadata: "meta", CommitTimestamp: 1700000000000, ExpireTimestamp: -1}
		if v == 3 {
			ov.LeaderEpoch = 5
		}
		if v == 1 {
			ov.ExpireTimestamp = 1700000009999
		}
		kv := kmsg.OffsetCommitValue{Version: v, Offset: ov.Offset, LeaderEpoch: ov.LeaderEpoch, Metadata: ov.Metadata,
			CommitTimestamp: ov.CommitTimestamp, ExpireTimestamp: ov.ExpireTimestamp}
		got := EncodeOffsetValue(ov)
		if want := kv.AppendTo(nil); !bytes.Equal(got, want) {
			t.Errorf("offset value v%d: %x, kmsg %x", v, got, want)
		}
		dec, err := DecodeOffsetValue(got)
		if err != nil || dec != ov {
			t.Errorf("offset value v%d round trip: %+v %v", v, dec, err)
		}
		golden(t, "offset_value_v"+string(rune('0'+v))+".hex", got)

		gv := sampleGroupValue(v)
		kg := kmsg.GroupMetadataValue{Version: v, ProtocolType: gv.ProtocolType, Generation: gv.Generation,
			Protocol: gv.Protocol, Leader: gv.Leader, CurrentStateTimestamp: gv.CurrentStateTimestamp}
		for _, m := range gv.Members {
			kg.Members = append(kg.Members, kmsg.GroupMetadataValueMember{MemberID: m.MemberID, InstanceID: m.InstanceID,
				ClientID: m.ClientID, ClientHost: m.ClientHost, RebalanceTimeoutMillis: m.RebalanceTimeout,
				SessionTimeoutMillis: m.SessionTimeout, Subscription: m.Subscription, Assignment: m.Assignment})
		}
		gb := EncodeGroupValue(gv)
		if want := kg.AppendTo(nil); !bytes.Equal(gb, want) {
			t.Errorf("group value v%d: %x, kmsg %x", v, gb, want)
		}
		gd, err := DecodeGroupValue(gb)
		if err != nil {
			t.Fatalf("group value v%d: %v", v, err)
		}
		if EncodeGroupValue(gd) == nil || !bytes.Equal(EncodeGroupValue(gd), gb) {
			t.Errorf("group value v%d does not re-encode identically: %+v", v, gd)
		}
		golden(t, "group_value_v"+string(rune('0'+v))+".hex", gb)
	}
	kk := (&kmsg.OffsetCommitKey{Version: 1, Group: "grp", Topic: "topic", Partition: 9}).AppendTo(nil)
	k, err := DecodeKey(kk)
	if err != nil || k.Offset == nil || *k.Offset != (OffsetKey{Version: 1, Group: "grp", Topic: "topic", Partition: 9}) {
		t.Errorf("kmsg offset key decoded as %+v, %v", k, err)
	}
	gk := (&kmsg.GroupMetadataKey{Version: 2, Group: "grp"}).AppendTo(nil)
	k, err = DecodeKey(gk)
	if err != nil || k.Group == nil || k.Group.Group != "grp" {
		t.Errorf("kmsg group key decoded as %+v, %v", k, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	if _, err := DecodeKey(hextest.Decode(t, "0003 0001 61")); !errors.Is(err, ErrUnknownKeyVersion) {
		t.Errorf("key version 3: %v", err)
	}
	for _, b := range [][]byte{nil, {0}, hextest.Decode(t, "0001 0005 61"), hextest.Decode(t, "0002 ffff")} {
		if _, err := DecodeKey(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeKey(%x) = %v, want ErrMalformed", b, err)
		}
	}
	full := EncodeGroupValue(sampleGroupValue(3))
	for i := 0; i < len(full); i++ {
		if _, err := DecodeGroupValue(full[:i]); err == nil {
			t.Fatalf("truncated group value at %d decoded", i)
		}
	}
	if _, err := DecodeGroupValue(hextest.Decode(t, "0003 0000 00000000 ffff ffff 0000000000000000 7fffffff")); !errors.Is(err, ErrMalformed) {
		t.Errorf("huge member count: %v", err)
	}
}

func TestDescribeRecord(t *testing.T) {
	key := EncodeOffsetKey(OffsetKey{Version: 1, Group: "g1", Topic: "t", Partition: 0})
	for _, tc := range []struct {
		key, val []byte
		want     string
	}{
		{key, EncodeOffsetValue(OffsetValue{Version: 3, Offset: 42}), "key: offset_commit::group=g1,partition=t-0 payload: offset=42"},
		{key, EncodeOffsetValue(OffsetValue{Version: 3, Offset: 43, Metadata: "m"}), "key: offset_commit::group=g1,partition=t-0 payload: offset=43,metadata=m"},
		{key, nil, "key: offset_commit::group=g1,partition=t-0 payload: <DELETE>"},
		{EncodeGroupKey("g1"), nil, "key: group_metadata::group=g1 payload: <DELETE>"},
		{EncodeGroupKey("g1"), groupValueWithAssignment(), `key: group_metadata::group=g1 payload: {"protocolType":"consumer","protocol":"range","generationId":1,"assignment":"{m1=[t-0, t-1]}"}`},
	} {
		got, err := DescribeRecord(tc.key, tc.val)
		if err != nil || got != tc.want {
			t.Errorf("DescribeRecord = %q, %v\nwant %q", got, err, tc.want)
		}
	}
	if _, err := DescribeRecord(nil, nil); err == nil {
		t.Error("nil key accepted")
	}
}

func groupValueWithAssignment() []byte {
	assign := (&kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: []int32{0, 1}}}}).AppendTo(nil)
	proto, leader := "range", "m1"
	return EncodeGroupValue(GroupValue{Version: 3, ProtocolType: "consumer", Generation: 1, Protocol: &proto, Leader: &leader,
		Members: []MemberValue{{MemberID: "m1", ClientID: "c", ClientHost: "/127.0.0.1", Assignment: assign}}})
}

// FuzzDecodeKey: DecodeKey never panics, and a decoded key re-encodes to
// a prefix of the input (trailing bytes are tolerated).
func FuzzDecodeKey(f *testing.F) {
	f.Add(EncodeOffsetKey(OffsetKey{Version: 1, Group: "g1", Topic: "t"}))
	f.Add(EncodeOffsetKey(OffsetKey{Version: 0, Group: "", Topic: "x", Partition: -1}))
	f.Add(EncodeGroupKey("g1"))
	f.Add([]byte{0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := DecodeKey(b)
		if err != nil {
			return
		}
		var re []byte
		if k.Offset != nil {
			re = EncodeOffsetKey(*k.Offset)
		} else {
			re = EncodeGroupKey(k.Group.Group)
		}
		if !bytes.HasPrefix(b, re) {
			t.Fatalf("re-encoded %x is not a prefix of %x", re, b)
		}
	})
}

// FuzzDecodeOffsetValue: no panic; classic versions re-encode to a prefix
// of the input.
func FuzzDecodeOffsetValue(f *testing.F) {
	for v := int16(0); v <= 3; v++ {
		f.Add(EncodeOffsetValue(OffsetValue{Version: v, Offset: 1, Metadata: "m", CommitTimestamp: 2, ExpireTimestamp: 3}))
	}
	f.Add((&kmsg.OffsetCommitValue{Version: 4, Offset: 5}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeOffsetValue(b)
		if err != nil || v.Version > 3 {
			return
		}
		if re := EncodeOffsetValue(v); !bytes.HasPrefix(b, re) {
			t.Fatalf("re-encoded %x is not a prefix of %x", re, b)
		}
	})
}

// FuzzDecodeGroupValue: no panic, no huge allocation from a forged count;
// classic versions re-encode to a prefix of the input except that null
// bytes fields read back as empty.
func FuzzDecodeGroupValue(f *testing.F) {
	for v := int16(0); v <= 3; v++ {
		f.Add(EncodeGroupValue(sampleGroupValue(v)))
	}
	f.Add(groupValueWithAssignment())
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeGroupValue(b)
		if err != nil || v.Version > 3 {
			return
		}
		re := EncodeGroupValue(v)
		if len(re) > len(b) {
			t.Fatalf("re-encoding %x longer than input %x", re, b)
		}
	})
}

// FuzzDescribeRecord: never panics on any key/value pair.
func FuzzDescribeRecord(f *testing.F) {
	f.Add(EncodeGroupKey("g1"), groupValueWithAssignment())
	f.Add(EncodeOffsetKey(OffsetKey{Version: 1, Group: "g", Topic: "t"}), EncodeOffsetValue(OffsetValue{Version: 3}))
	f.Fuzz(func(t *testing.T, k, v []byte) {
		s, err := DescribeRecord(k, v)
		if err == nil && !strings.HasPrefix(s, "key: ") {
			t.Fatalf("bad rendering %q", s)
		}
	})
}

// FuzzLoadRecords: a partition holding arbitrary keys and values (valid,
// truncated, unknown versions, tombstones) loads without panicking, the
// partition ends up loaded, and the loaded groups answer requests.
func FuzzLoadRecords(f *testing.F) {
	f.Add(EncodeOffsetKey(OffsetKey{Version: 1, Group: "g", Topic: "t"}), EncodeOffsetValue(OffsetValue{Version: 3, Offset: 4}), false)
	f.Add(EncodeGroupKey("g"), EncodeGroupValue(sampleGroupValue(3)), false)
	f.Add(EncodeGroupKey("g"), EncodeGroupValue(sampleGroupValue(0))[:20], false)
	f.Add(EncodeGroupKey("g"), []byte(nil), true)
	f.Add([]byte{0, 7}, []byte{1, 2, 3}, false)
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		}
		store := NewMemStore()
		o := record.DefaultBuildOptions()
		o.BaseTimestamp = t0.UnixMilli()
		recs := []record.Record{{Key: key, Value: value}, {OffsetDelta: 1, Key: EncodeOffsetKey(OffsetKey{Version: 1, Group: "g", Topic: "t", Partition: 1}), Value: EncodeOffsetValue(OffsetValue{Version: 3, Offset: 9})}}
		if err := store.Append(context.Background(), 0, record.Build(o, recs)); err != nil {
			t.Fatal(err)
		}
		cfg := testConfig()
		cfg.OffsetsTopicPartitions = 1
		h := newHarnessWith(t, cfg, store, purgatory.NewFakeClock(t0))
		if off, _, code := h.fetch("g", "t", 1); code != 0 || off != 9 {
			t.Fatalf("offset after load %d %s", off, errName(code))
		}
		h.c.DescribeGroups(context.Background(), &kmsg.DescribeGroupsRequest{Groups: []string{"g"}})
		h.c.ListGroups(context.Background(), &kmsg.ListGroupsRequest{Version: 4})
	})
}
