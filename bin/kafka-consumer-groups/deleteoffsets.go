package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// deleteOffsetRow is one line of --delete-offsets' table; partition -1
// is a topic whose partitions could not be listed ("Not Provided").
type deleteOffsetRow struct {
	topic     string
	partition int32
	err       string // "" = deleted
}

// deleteOffsets is ConsumerGroupService.deleteOffsets (OffsetDelete, API
// key 47): the partitions of each --topic ("t" for all of them, "t:0,1"
// for some) of the one --group, Kafka's verdict line for the top-level
// outcome, then the TOPIC PARTITION STATUS table.
func (s *kafkaService) deleteOffsets(ctx context.Context) error {
	group := s.o.groups[len(s.o.groups)-1]
	var parts []tp
	var rows []deleteOffsetRow
	var whole []string
	for _, a := range s.o.topics {
		t, ps, ok := strings.Cut(a, ":")
		if !ok {
			whole = append(whole, a)
			continue
		}
		for _, p := range strings.Split(ps, ",") {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return fmt.Errorf("For input string: \"%s\"", p)
			}
			parts = append(parts, tp{t, int32(n)})
		}
	}
	if len(whole) > 0 {
		td, err := adminCall(ctx, s, func(c context.Context) (kadm.TopicDetails, error) { return s.adm.ListTopics(c, whole...) })
		if err != nil {
			return err
		}
		for _, t := range whole {
			d, ok := td[t]
			switch {
			case !ok:
				rows = append(rows, deleteOffsetRow{topic: t, partition: -1, err: javaError(kerr.UnknownTopicOrPartition)})
			case d.Err != nil:
				rows = append(rows, deleteOffsetRow{topic: t, partition: -1, err: javaError(d.Err)})
			default:
				for _, p := range d.Partitions.Numbers() {
					parts = append(parts, tp{t, p})
				}
			}
		}
	}

	top, perPartition, err := s.sendOffsetDelete(ctx, group, parts)
	if err != nil {
		return err
	}
	switch top {
	case nil:
		fmt.Fprintf(s.stdout, "Request succeed for deleting offsets with topic %s group %s\n", strings.Join(s.o.topics, ", "), group)
	case kerr.InvalidGroupID:
		printError(s.stdout, fmt.Sprintf("'%s' is not valid.", group))
	case kerr.GroupIDNotFound:
		printError(s.stdout, fmt.Sprintf("'%s' does not exist.", group))
	case kerr.GroupAuthorizationFailed:
		printError(s.stdout, fmt.Sprintf("Access to '%s' is not authorized.", group))
	case kerr.NonEmptyGroup:
		printError(s.stdout, fmt.Sprintf("Deleting offsets of a consumer group '%s' is forbidden if the group is not empty.", group))
	case kerr.GroupSubscribedToTopic, kerr.TopicAuthorizationFailed, kerr.UnknownTopicOrPartition:
		printError(s.stdout, "Encounter some partition level error, see the follow-up details:")
	default:
		name := "UNKNOWN_SERVER_ERROR"
		var ke *kerr.Error
		if errors.As(top, &ke) {
			name = ke.Message
		}
		printError(s.stdout, "Encounter some unknown error: "+name)
	}
	seen := map[tp]bool{}
	for _, x := range parts {
		if seen[x] {
			continue
		}
		seen[x] = true
		row := deleteOffsetRow{topic: x.topic, partition: x.partition}
		if e := perPartition[x]; e != nil {
			row.err = javaError(e)
		}
		rows = append(rows, row)
	}
	printDeleteOffsets(s, rows)
	return nil
}

// sendOffsetDelete sends one OffsetDelete to the group's coordinator. The
// top-level outcome is the Java client's all(): the response's error, or
// else the first partition error; a top-level error fails every partition.
func (s *kafkaService) sendOffsetDelete(ctx context.Context, group string, parts []tp) (top error, perPartition map[tp]error, err error) {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	index := map[string]int{}
	for _, x := range parts {
		i, ok := index[x.topic]
		if !ok {
			i = len(req.Topics)
			index[x.topic] = i
			t := kmsg.NewOffsetDeleteRequestTopic()
			t.Topic = x.topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewOffsetDeleteRequestTopicPartition()
		p.Partition = x.partition
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	resp, err := adminCall(ctx, s, func(c context.Context) (*kmsg.OffsetDeleteResponse, error) { return req.RequestWith(c, s.cl) })
	if err != nil {
		return nil, nil, err
	}
	perPartition = map[tp]error{}
	if top = kerr.ErrorForCode(resp.ErrorCode); top != nil {
		for _, x := range parts {
			perPartition[x] = top
		}
		return top, perPartition, nil
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
				perPartition[tp{t.Topic, p.Partition}] = e
			}
		}
	}
	for _, x := range parts {
		if e := perPartition[x]; e != nil {
			return e, perPartition, nil
		}
	}
	return nil, perPartition, nil
}

// printDeleteOffsets prints the table sorted as Kafka sorts it: by the
// topic name followed by the partition number, as one string.
func printDeleteOffsets(s *kafkaService, rows []deleteOffsetRow) {
	key := func(r deleteOffsetRow) string { return r.topic + strconv.Itoa(int(r.partition)) }
	sort.SliceStable(rows, func(i, j int) bool { return key(rows[i]) < key(rows[j]) })
	fmt.Fprintf(s.stdout, "\n%s %s %s\n", pad("TOPIC", 30), pad("PARTITION", 15), pad("STATUS", 15))
	for _, r := range rows {
		p := "Not Provided"
		if r.partition >= 0 {
			p = strconv.Itoa(int(r.partition))
		}
		status := "Successful"
		if r.err != "" {
			status = "Error: " + r.err
		}
		fmt.Fprintf(s.stdout, "%s %s %s\n", pad(r.topic, 30), pad(p, 15), pad(status, 15))
	}
}
