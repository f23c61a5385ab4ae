package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/group"
)

const groupFormatterClass = "kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter"

// groupMetadataFormatter is GroupMetadataManager.GroupMetadataMessageFormatter:
// for each group metadata record of __consumer_offsets,
// "<group>::GroupMetadata(...)" as Kafka 2.8's GroupMetadata.toString
// renders the loaded group (or "::NULL" for a tombstone); offset commit
// records print nothing.
type groupMetadataFormatter struct{}

func (groupMetadataFormatter) write(out, _ io.Writer, m clitools.Message) error {
	if m.Key == nil {
		return nil
	}
	k, err := group.DecodeKey(m.Key)
	if err != nil {
		return decodeException(err)
	}
	if k.Group == nil {
		return nil
	}
	value := "NULL"
	if m.Value != nil {
		v, err := group.DecodeGroupValue(m.Value)
		if err != nil {
			return decodeException(err)
		}
		value = formatGroupMetadata(k.Group.Group, v)
	}
	_, err = fmt.Fprintf(out, "%s::%s\n", k.Group.Group, value)
	return err
}

// formatGroupMetadata is GroupMetadata.toString of a group loaded from v:
// Empty without members, else Stable; the members in the iteration order
// of Scala 2.13's mutable.HashMap keyed by member id.
func formatGroupMetadata(id string, v group.GroupValue) string {
	protocolType := "None"
	if v.ProtocolType != "" {
		protocolType = "Some(" + v.ProtocolType + ")"
	}
	state := "Stable"
	if len(v.Members) == 0 {
		state = "Empty"
	}
	protocol := "null"
	if v.Protocol != nil {
		protocol = *v.Protocol
	}
	ids := make([]string, len(v.Members))
	for i, mem := range v.Members {
		ids[i] = mem.MemberID
	}
	var members []string
	for _, i := range scalaHashMapOrder(ids) {
		mem := v.Members[i]
		instance := "None"
		if mem.InstanceID != nil {
			instance = "Some(" + *mem.InstanceID + ")"
		}
		members = append(members, fmt.Sprintf("%s -> MemberMetadata(memberId=%s, groupInstanceId=%s, clientId=%s, clientHost=%s, sessionTimeoutMs=%d, rebalanceTimeoutMs=%d, supportedProtocols=List(%s), )",
			mem.MemberID, mem.MemberID, instance, mem.ClientID, mem.ClientHost, mem.SessionTimeout, mem.RebalanceTimeout, protocol))
	}
	return fmt.Sprintf("GroupMetadata(groupId=%s, generation=%d, protocolType=%s, currentState=%s, members=HashMap(%s))",
		id, v.Generation, protocolType, state, strings.Join(members, ", "))
}

// scalaHashMapOrder returns the indexes of keys (later duplicates
// dropped) in the iteration order of a Scala 2.13 mutable.HashMap they
// were put into one by one: by bucket (improved hash & (table length -
// 1)), then by improved hash, where improved hash = h ^ (h >>> 16) of the
// key's String.hashCode; the table starts at 16 and doubles when an
// element would reach 0.75 of it.
func scalaHashMapOrder(keys []string) []int {
	type elem struct {
		hash int32
		idx  int
	}
	tableLen := 16
	seen := map[string]bool{}
	var elems []elem
	for i, k := range keys {
		if seen[k] {
			continue
		}
		if len(elems)+1 >= int(float64(tableLen)*0.75) {
			tableLen *= 2
		}
		seen[k] = true
		h := jvm.StringHashCode(k)
		h ^= int32(uint32(h) >> 16)
		elems = append(elems, elem{hash: h, idx: i})
	}
	mask := int32(tableLen - 1)
	slices.SortStableFunc(elems, func(a, b elem) int {
		if ba, bb := a.hash&mask, b.hash&mask; ba != bb {
			return int(ba - bb)
		}
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return 0
	})
	out := make([]int, len(elems))
	for i, e := range elems {
		out[i] = e.idx
	}
	return out
}
