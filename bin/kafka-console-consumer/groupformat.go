package main

import (
	"fmt"
	"io"
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
	// A member id seen before is skipped (the first member with it is
	// printed).
	var uniq []group.MemberValue
	seen := map[string]bool{}
	for _, mem := range v.Members {
		if !seen[mem.MemberID] {
			seen[mem.MemberID] = true
			uniq = append(uniq, mem)
		}
	}
	var members []string
	for _, mem := range jvm.ScalaHashMapOrder(uniq, func(m group.MemberValue) int32 { return jvm.StringHashCode(m.MemberID) }) {
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
