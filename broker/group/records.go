package group

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Key versions of __consumer_offsets records. The
// key's version tells the record kind: 0 and 1 are offset commits (same
// layout, Kafka 3.4 writes 1), 2 is group metadata.
const (
	OffsetKeyVersion0  int16 = 0
	OffsetKeyVersion1  int16 = 1
	GroupKeyVersion    int16 = 2
	offsetValueLatest  int16 = 3
	groupValueLatest   int16 = 3
	maxClassicValueVer int16 = 3
)

// ErrMalformed is wrapped by every decoding error of this file.
var ErrMalformed = errors.New("group: malformed __consumer_offsets record")

// ErrUnknownKeyVersion is returned by DecodeKey for a key version other
// than 0, 1 or 2; the loader reports and skips such records.
var ErrUnknownKeyVersion = errors.New("group: unknown __consumer_offsets key version")

// OffsetKey is Kafka's OffsetCommitKey (key versions 0 and 1).
type OffsetKey struct {
	Version   int16
	Group     string
	Topic     string
	Partition int32
}

// OffsetValue is Kafka's OffsetCommitValue, versions 0-3. LeaderEpoch is
// -1 when absent (v0-v2); ExpireTimestamp is -1 except in v1.
type OffsetValue struct {
	Version         int16
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64
	ExpireTimestamp int64
}

// GroupKey is Kafka's GroupMetadataKey (key version 2).
type GroupKey struct {
	Group string
}

// GroupValue is Kafka's GroupMetadataValue, versions 0-3.
// CurrentStateTimestamp is -1 when unknown (v0/v1).
type GroupValue struct {
	Version               int16
	ProtocolType          string
	Generation            int32
	Protocol              *string
	Leader                *string
	CurrentStateTimestamp int64
	Members               []MemberValue
}

// MemberValue is one member inside a GroupValue. For v0 values
// RebalanceTimeout is set to SessionTimeout when decoded, as Kafka does.
type MemberValue struct {
	MemberID         string
	InstanceID       *string
	ClientID         string
	ClientHost       string
	RebalanceTimeout int32
	SessionTimeout   int32
	Subscription     []byte
	Assignment       []byte
}

// Key is a decoded key: exactly one of Offset and Group is set.
type Key struct {
	Offset *OffsetKey
	Group  *GroupKey
}

// ---- encoding (classic non-flexible protocol encoding) ----

// EncodeOffsetKey encodes an offset commit key. Version 0 and 1 share the
// layout; a zero Version is written as given, so set 1 for Kafka 3.4's.
func EncodeOffsetKey(k OffsetKey) []byte {
	b := kbin.AppendInt16(nil, k.Version)
	b = kbin.AppendString(b, k.Group)
	b = kbin.AppendString(b, k.Topic)
	return kbin.AppendInt32(b, k.Partition)
}

// EncodeOffsetValue encodes v in its Version (0-3).
func EncodeOffsetValue(v OffsetValue) []byte {
	b := kbin.AppendInt16(nil, v.Version)
	b = kbin.AppendInt64(b, v.Offset)
	if v.Version >= 3 {
		b = kbin.AppendInt32(b, v.LeaderEpoch)
	}
	b = kbin.AppendString(b, v.Metadata)
	b = kbin.AppendInt64(b, v.CommitTimestamp)
	if v.Version == 1 {
		b = kbin.AppendInt64(b, v.ExpireTimestamp)
	}
	return b
}

// EncodeGroupKey encodes a group metadata key (version 2).
func EncodeGroupKey(group string) []byte {
	return kbin.AppendString(kbin.AppendInt16(nil, GroupKeyVersion), group)
}

// EncodeGroupValue encodes v in its Version (0-3).
func EncodeGroupValue(v GroupValue) []byte {
	b := kbin.AppendInt16(nil, v.Version)
	b = kbin.AppendString(b, v.ProtocolType)
	b = kbin.AppendInt32(b, v.Generation)
	b = kbin.AppendNullableString(b, v.Protocol)
	b = kbin.AppendNullableString(b, v.Leader)
	if v.Version >= 2 {
		b = kbin.AppendInt64(b, v.CurrentStateTimestamp)
	}
	b = kbin.AppendInt32(b, int32(len(v.Members)))
	for _, m := range v.Members {
		b = kbin.AppendString(b, m.MemberID)
		if v.Version >= 3 {
			b = kbin.AppendNullableString(b, m.InstanceID)
		}
		b = kbin.AppendString(b, m.ClientID)
		b = kbin.AppendString(b, m.ClientHost)
		if v.Version >= 1 {
			b = kbin.AppendInt32(b, m.RebalanceTimeout)
		}
		b = kbin.AppendInt32(b, m.SessionTimeout)
		b = kbin.AppendBytes(b, m.Subscription)
		b = kbin.AppendBytes(b, m.Assignment)
	}
	return b
}

// ---- decoding ----

// reader is a bounds-checked cursor; the first failure sticks and later
// reads return zero values, so decoders check err once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated %s", ErrMalformed, what)
	}
}

// take returns the next n bytes and moves past them; ok is false (and the
// error sticks) when fewer are left or an earlier read failed.
func (r *reader) take(n int, what string) (b []byte, ok bool) {
	if r.err != nil || len(r.b) < n {
		r.fail(what)
		return nil, false
	}
	b = r.b[:n]
	r.b = r.b[n:]
	return b, true
}

func (r *reader) int16(what string) int16 {
	if b, ok := r.take(2, what); ok {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32(what string) int32 {
	if b, ok := r.take(4, what); ok {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64(what string) int64 {
	if b, ok := r.take(8, what); ok {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// valueVersion reads the int16 version that starts a record value; a
// negative version is malformed.
func (r *reader) valueVersion(what string) (int16, error) {
	v := r.int16(what + " version")
	if r.err != nil {
		return 0, r.err
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: %s version %d", ErrMalformed, what, v)
	}
	return v, nil
}

func (r *reader) nullableString(what string) *string {
	n := r.int16(what)
	if r.err != nil {
		return nil
	}
	if n < 0 {
		if n != -1 {
			r.err = fmt.Errorf("%w: negative length %d of %s", ErrMalformed, n, what)
		}
		return nil
	}
	b, ok := r.take(int(n), what)
	if !ok {
		return nil
	}
	s := string(b)
	return &s
}

func (r *reader) string(what string) string {
	s := r.nullableString(what)
	if s == nil {
		if r.err == nil {
			r.err = fmt.Errorf("%w: null %s", ErrMalformed, what)
		}
		return ""
	}
	return *s
}

func (r *reader) bytes(what string) []byte {
	n := r.int32(what)
	if r.err != nil {
		return nil
	}
	if n < 0 {
		return nil // a null bytes field reads as empty
	}
	b, ok := r.take(int(n), what)
	if !ok {
		return nil
	}
	return append([]byte{}, b...)
}

// DecodeKey decodes a __consumer_offsets record key. Trailing bytes are
// tolerated, as Kafka's schema reader does.
func DecodeKey(b []byte) (Key, error) {
	r := reader{b: b}
	version := r.int16("key version")
	if r.err != nil {
		return Key{}, r.err
	}
	switch version {
	case OffsetKeyVersion0, OffsetKeyVersion1:
		k := OffsetKey{Version: version}
		k.Group = r.string("group")
		k.Topic = r.string("topic")
		k.Partition = r.int32("partition")
		if r.err != nil {
			return Key{}, r.err
		}
		return Key{Offset: &k}, nil
	case GroupKeyVersion:
		g := GroupKey{Group: r.string("group")}
		if r.err != nil {
			return Key{}, r.err
		}
		return Key{Group: &g}, nil
	default:
		return Key{}, fmt.Errorf("%w %d", ErrUnknownKeyVersion, version)
	}
}

// DecodeOffsetValue decodes an offset commit value of version 0-3, and of
// later (flexible) versions through kmsg.
func DecodeOffsetValue(b []byte) (OffsetValue, error) {
	r := reader{b: b}
	v := OffsetValue{LeaderEpoch: -1, ExpireTimestamp: -1}
	var err error
	if v.Version, err = r.valueVersion("offset value"); err != nil {
		return OffsetValue{}, err
	}
	if v.Version > maxClassicValueVer {
		var kv kmsg.OffsetCommitValue
		if err := kv.ReadFrom(b); err != nil {
			return OffsetValue{}, fmt.Errorf("%w: offset value v%d: %v", ErrMalformed, v.Version, err)
		}
		return OffsetValue{Version: kv.Version, Offset: kv.Offset, LeaderEpoch: kv.LeaderEpoch,
			Metadata: kv.Metadata, CommitTimestamp: kv.CommitTimestamp, ExpireTimestamp: -1}, nil
	}
	v.Offset = r.int64("offset")
	if v.Version >= 3 {
		v.LeaderEpoch = r.int32("leader epoch")
	}
	v.Metadata = r.string("metadata")
	v.CommitTimestamp = r.int64("commit timestamp")
	if v.Version == 1 {
		v.ExpireTimestamp = r.int64("expire timestamp")
	}
	if r.err != nil {
		return OffsetValue{}, r.err
	}
	return v, nil
}

// DecodeGroupValue decodes a group metadata value of version 0-3, and of
// later (flexible) versions through kmsg.
func DecodeGroupValue(b []byte) (GroupValue, error) {
	r := reader{b: b}
	v := GroupValue{CurrentStateTimestamp: -1}
	var err error
	if v.Version, err = r.valueVersion("group value"); err != nil {
		return GroupValue{}, err
	}
	if v.Version > maxClassicValueVer {
		return decodeGroupValueKmsg(b)
	}
	v.ProtocolType = r.string("protocol type")
	v.Generation = r.int32("generation")
	v.Protocol = r.nullableString("protocol")
	v.Leader = r.nullableString("leader")
	if v.Version >= 2 {
		v.CurrentStateTimestamp = r.int64("current state timestamp")
	}
	n := r.int32("member count")
	if r.err != nil {
		return GroupValue{}, r.err
	}
	// Each member needs at least 2+2+2+4+4+4 bytes; refuse counts that
	// cannot fit before allocating.
	if n < 0 || int64(n)*18 > int64(len(r.b)) {
		return GroupValue{}, fmt.Errorf("%w: member count %d does not fit in %d bytes", ErrMalformed, n, len(r.b))
	}
	v.Members = make([]MemberValue, 0, n)
	for i := int32(0); i < n && r.err == nil; i++ {
		var m MemberValue
		m.MemberID = r.string("member id")
		if v.Version >= 3 {
			m.InstanceID = r.nullableString("group instance id")
		}
		m.ClientID = r.string("client id")
		m.ClientHost = r.string("client host")
		if v.Version >= 1 {
			m.RebalanceTimeout = r.int32("rebalance timeout")
		}
		m.SessionTimeout = r.int32("session timeout")
		if v.Version == 0 {
			m.RebalanceTimeout = m.SessionTimeout
		}
		m.Subscription = r.bytes("subscription")
		m.Assignment = r.bytes("assignment")
		v.Members = append(v.Members, m)
	}
	if r.err != nil {
		return GroupValue{}, r.err
	}
	return v, nil
}

func decodeGroupValueKmsg(b []byte) (GroupValue, error) {
	var kv kmsg.GroupMetadataValue
	if err := kv.ReadFrom(b); err != nil {
		return GroupValue{}, fmt.Errorf("%w: group value: %v", ErrMalformed, err)
	}
	v := GroupValue{Version: kv.Version, ProtocolType: kv.ProtocolType, Generation: kv.Generation,
		Protocol: kv.Protocol, Leader: kv.Leader, CurrentStateTimestamp: kv.CurrentStateTimestamp}
	for _, m := range kv.Members {
		v.Members = append(v.Members, MemberValue{MemberID: m.MemberID, InstanceID: m.InstanceID,
			ClientID: m.ClientID, ClientHost: m.ClientHost, RebalanceTimeout: m.RebalanceTimeoutMillis,
			SessionTimeout: m.SessionTimeoutMillis, Subscription: m.Subscription, Assignment: m.Assignment})
	}
	return v, nil
}

// DescribeRecord renders a __consumer_offsets record the way
// kafka-dump-log.sh --offsets-decoder prints it ("key: ... payload: ..."),
// following GroupMetadataManager.formatRecordKeyAndValue of Kafka 3.4. A
// nil value is a tombstone, printed as <DELETE>.
func DescribeRecord(key, value []byte) (string, error) {
	ks, payload, err := DescribeKeyAndValue(key, value)
	if err != nil {
		return "", err
	}
	return "key: " + ks + " payload: " + payload, nil
}

// DescribeKeyAndValue is DescribeRecord's two parts, for a caller that
// prints them apart (kafka-dump-log.sh --offsets-decoder).
func DescribeKeyAndValue(key, value []byte) (keyString, payload string, err error) {
	if key == nil {
		return "", "", errors.New("group: record has no key")
	}
	k, err := DecodeKey(key)
	if err != nil {
		return "", "", err
	}
	var ks string
	describe := describeGroupValue
	if k.Offset != nil {
		ks = fmt.Sprintf("offset_commit::group=%s,partition=%s-%d", k.Offset.Group, k.Offset.Topic, k.Offset.Partition)
		describe = describeOffsetValue
	} else {
		ks = "group_metadata::group=" + k.Group.Group
	}
	if value == nil {
		return ks, "<DELETE>", nil
	}
	if payload, err = describe(value); err != nil {
		return "", "", err
	}
	return ks, payload, nil
}

func describeOffsetValue(value []byte) (string, error) {
	v, err := DecodeOffsetValue(value)
	if err != nil {
		return "", err
	}
	payload := fmt.Sprintf("offset=%d", v.Offset)
	if v.Metadata != "" {
		payload += ",metadata=" + v.Metadata
	}
	return payload, nil
}

func describeGroupValue(value []byte) (string, error) {
	v, err := DecodeGroupValue(value)
	if err != nil {
		return "", err
	}
	members := make([]string, 0, len(v.Members))
	for _, m := range v.Members {
		if v.ProtocolType == ConsumerProtocolType {
			var a kmsg.ConsumerMemberAssignment
			if err := a.ReadFrom(m.Assignment); err == nil {
				var tps []string
				for _, t := range a.Topics {
					for _, p := range t.Partitions {
						tps = append(tps, fmt.Sprintf("%s-%d", t.Topic, p))
					}
				}
				s := fmt.Sprintf("%s=[%s]", m.MemberID, strings.Join(tps, ", "))
				if len(a.UserData) > 0 {
					s += ":" + fmt.Sprintf("%X", new(big.Int).SetBytes(a.UserData))
				}
				members = append(members, s)
				continue
			}
		}
		hex := ""
		if len(m.Assignment) > 0 {
			hex = fmt.Sprintf("%X", new(big.Int).SetBytes(m.Assignment))
		}
		members = append(members, m.MemberID+"="+hex)
	}
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	protocol := "null"
	if v.Protocol != nil {
		protocol = js(*v.Protocol)
	}
	return fmt.Sprintf(`{"protocolType":%s,"protocol":%s,"generationId":%d,"assignment":%s}`,
		js(v.ProtocolType), protocol, v.Generation, js("{"+strings.Join(members, ",")+"}")), nil
}
