package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// kafkaService is Kafka's ConsumerGroupService over the admin API.
type kafkaService struct {
	o              *options
	cl             *kgo.Client
	adm            *kadm.Client
	timeout        time.Duration
	stdout, stderr io.Writer
	plan           resetPlan // --from-file, read on first use
}

func newKafkaService(o *options, stdout, stderr io.Writer) (*kafkaService, error) {
	cl, timeout, err := admintool.NewClient(o.bootstrap, "adminclient-1", o.timeout, o.props)
	if err != nil {
		return nil, err
	}
	return &kafkaService{o: o, cl: cl, adm: kadm.NewClient(cl), timeout: timeout, stdout: stdout, stderr: stderr}, nil
}

func (s *kafkaService) close() { s.cl.Close() }

func (s *kafkaService) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, s.timeout)
}

// adminCall runs one admin request under the tool's timeout; a failure
// comes back as the Java client's exception text.
func adminCall[T any](ctx context.Context, s *kafkaService, req func(c context.Context) (T, error)) (T, error) {
	c, cancel := s.ctx(ctx)
	defer cancel()
	v, err := req(c)
	if err != nil {
		var zero T
		return zero, errors.New(javaError(err))
	}
	return v, nil
}

// javaError renders an admin failure as the Java client's exception text.
func javaError(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		k := admintool.NewKafkaError(ke.Code, nil)
		switch ke.Code {
		case kerr.NonEmptyGroup.Code:
			k.Class = "GroupNotEmptyException"
		case kerr.GroupIDNotFound.Code:
			k.Class = "GroupIdNotFoundException"
		}
		return k.String()
	}
	// The Java admin client reports unreachable brokers as a timeout.
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "unable to dial") {
		return "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment."
	}
	return err.Error()
}

// listConsumerGroups lists groups of protocol type "consumer" (or none:
// offsets-only groups), sorted.
func (s *kafkaService) listConsumerGroups(ctx context.Context, states ...string) (kadm.ListedGroups, error) {
	lg, err := adminCall(ctx, s, func(c context.Context) (kadm.ListedGroups, error) { return s.adm.ListGroups(c, states...) })
	if err != nil {
		return nil, err
	}
	for g, l := range lg {
		if l.ProtocolType != "consumer" && l.ProtocolType != "" {
			delete(lg, g)
		}
	}
	return lg, nil
}

func (s *kafkaService) list(ctx context.Context) error {
	if !s.o.hasState {
		lg, err := s.listConsumerGroups(ctx)
		if err != nil {
			return err
		}
		for _, g := range lg.Groups() {
			fmt.Fprintln(s.stdout, g)
		}
		return nil
	}
	var states []string
	if s.o.state != "" {
		valid := []string{"PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty"}
		for _, st := range strings.Split(s.o.state, ",") {
			st = strings.TrimSpace(st)
			i := slices.IndexFunc(valid, func(v string) bool { return strings.EqualFold(v, st) })
			if i < 0 {
				return &admintool.UsageError{Msg: fmt.Sprintf("Invalid state list '%s'. Valid states are: %s", s.o.state, strings.Join(valid, ", "))}
			}
			states = append(states, valid[i])
		}
	}
	lg, err := s.listConsumerGroups(ctx, states...)
	if err != nil {
		return err
	}
	var rows [][2]string
	for _, l := range lg.Sorted() {
		rows = append(rows, [2]string{l.Group, l.State})
	}
	printGroupStates(s.stdout, rows)
	return nil
}

func (s *kafkaService) groupIDs(ctx context.Context) ([]string, error) {
	if s.o.allGroups {
		lg, err := s.listConsumerGroups(ctx)
		if err != nil {
			return nil, err
		}
		return lg.Groups(), nil
	}
	return s.o.groups, nil
}

func (s *kafkaService) describeGroups(ctx context.Context, groups []string) (kadm.DescribedGroups, error) {
	dg, err := adminCall(ctx, s, func(c context.Context) (kadm.DescribedGroups, error) { return s.adm.DescribeGroups(c, groups...) })
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		d, ok := dg[g]
		if !ok {
			return nil, fmt.Errorf("no description of group %s", g)
		}
		if d.Err != nil {
			return nil, errors.New(javaError(d.Err))
		}
	}
	return dg, nil
}

// committed returns the group's committed offsets (partitions without one
// are left out).
func (s *kafkaService) committed(ctx context.Context, group string) (map[string]map[int32]int64, error) {
	or, err := adminCall(ctx, s, func(c context.Context) (kadm.OffsetResponses, error) { return s.adm.FetchOffsets(c, group) })
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]int64{}
	for t, ps := range or {
		for p, r := range ps {
			if r.Err != nil {
				return nil, errors.New(javaError(r.Err))
			}
			if r.At < 0 {
				continue
			}
			if out[t] == nil {
				out[t] = map[int32]int64{}
			}
			out[t][p] = r.At
		}
	}
	return out, nil
}

type listKind int

const (
	listEnd listKind = iota
	listStart
)

// listOffsets returns the start or end offset of every partition of the
// topics (absent where unknown).
func (s *kafkaService) listOffsets(ctx context.Context, kind listKind, topics []string) (kadm.ListedOffsets, error) {
	if len(topics) == 0 {
		return kadm.ListedOffsets{}, nil
	}
	c, cancel := s.ctx(ctx)
	defer cancel()
	var lo kadm.ListedOffsets
	var err error
	if kind == listEnd {
		lo, err = s.adm.ListEndOffsets(c, topics...)
	} else {
		lo, err = s.adm.ListStartOffsets(c, topics...)
	}
	if err != nil {
		return nil, errors.New(javaError(err))
	}
	return lo, nil
}

func lookup(lo kadm.ListedOffsets, t string, p int32) *int64 {
	if o, ok := lo.Lookup(t, p); ok && o.Err == nil && o.Offset >= 0 {
		return i64(o.Offset)
	}
	return nil
}

type tp struct {
	topic     string
	partition int32
}

// memberPartitions flattens a member's consumer assignment in the
// assignment's topic order.
func memberPartitions(m kadm.DescribedGroupMember) []tp {
	var out []tp
	if a, ok := m.Assigned.AsConsumer(); ok {
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				out = append(out, tp{t.Topic, p})
			}
		}
	}
	return out
}

func (s *kafkaService) describe(ctx context.Context) error {
	dg, sorted, err := s.describeSelected(ctx)
	if err != nil {
		return err
	}
	p := s.o.p
	switch {
	case p.Has("members") && !p.Has("offsets"):
		for _, g := range sorted {
			d := dg[g]
			var rows []memberRow
			for _, m := range d.Members {
				parts := memberPartitions(m)
				r := memberRow{group: g, consumerID: m.MemberID, host: m.ClientHost, clientID: m.ClientID, numPartitions: len(parts)}
				if m.InstanceID != nil {
					r.instanceID = *m.InstanceID
				}
				if p.Has("verbose") {
					r.assignment = map[string][]int32{}
					for _, x := range parts {
						r.assignment[x.topic] = append(r.assignment[x.topic], x.partition)
					}
				}
				rows = append(rows, r)
			}
			if groupStatus(s.stdout, s.stderr, g, d.State, len(rows)) {
				printMembers(s.stdout, rows, p.Has("verbose"))
			}
		}
	case s.o.hasState && !p.Has("offsets"):
		for _, g := range sorted {
			d := dg[g]
			if groupStatus(s.stdout, s.stderr, g, d.State, 1) {
				coord := fmt.Sprintf("%s:%d (%d)", d.Coordinator.Host, d.Coordinator.Port, d.Coordinator.NodeID)
				printState(s.stdout, stateRow{group: g, coordinator: coord, strategy: d.Protocol, state: d.State, members: len(d.Members)})
			}
		}
	default:
		for _, g := range sorted {
			d := dg[g]
			rows, err := s.offsetRows(ctx, d)
			if err != nil {
				return err
			}
			if groupStatus(s.stdout, s.stderr, g, d.State, len(rows)) {
				printOffsets(s.stdout, rows)
			}
		}
	}
	return nil
}

// offsetRows is collectGroupsOffsets for one group: members with
// partitions first (most partitions first), each sorted by partition, then
// committed partitions nobody is assigned.
func (s *kafkaService) offsetRows(ctx context.Context, d kadm.DescribedGroup) ([]assignmentRow, error) {
	if d.State == "Dead" {
		return nil, nil
	}
	committed, err := s.committed(ctx, d.Group)
	if err != nil {
		return nil, err
	}
	members := slices.Clone(d.Members)
	members = slices.DeleteFunc(members, func(m kadm.DescribedGroupMember) bool { return len(memberPartitions(m)) == 0 })
	sort.SliceStable(members, func(i, j int) bool { return len(memberPartitions(members[i])) > len(memberPartitions(members[j])) })
	topicSet := map[string]bool{}
	assigned := map[tp]bool{}
	for _, m := range members {
		for _, x := range memberPartitions(m) {
			topicSet[x.topic], assigned[x] = true, true
		}
	}
	var unassigned []tp
	for t, ps := range committed {
		for p := range ps {
			if !assigned[tp{t, p}] {
				unassigned = append(unassigned, tp{t, p})
				topicSet[t] = true
			}
		}
	}
	topics := make([]string, 0, len(topicSet))
	for t := range topicSet {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	ends, err := s.listOffsets(ctx, listEnd, topics)
	if err != nil {
		return nil, err
	}
	row := func(x tp, consumer, host, client *string) assignmentRow {
		var off *int64
		if o, ok := committed[x.topic][x.partition]; ok {
			off = i64(o)
		}
		end := lookup(ends, x.topic, x.partition)
		return assignmentRow{group: d.Group, topic: str(x.topic), partition: i32(x.partition), offset: off,
			logEndOffset: end, lag: lag(off, end), consumerID: consumer, host: host, clientID: client}
	}
	var rows []assignmentRow
	for _, m := range members {
		parts := memberPartitions(m)
		sort.SliceStable(parts, func(i, j int) bool { return parts[i].partition < parts[j].partition })
		for _, x := range parts {
			rows = append(rows, row(x, str(m.MemberID), str(m.ClientHost), str(m.ClientID)))
		}
	}
	sort.Slice(unassigned, func(i, j int) bool {
		if unassigned[i].partition != unassigned[j].partition {
			return unassigned[i].partition < unassigned[j].partition
		}
		return unassigned[i].topic < unassigned[j].topic
	})
	for _, x := range unassigned {
		rows = append(rows, row(x, str(missing), str(missing), str(missing)))
	}
	return rows, nil
}

func (s *kafkaService) delete(ctx context.Context) error {
	groups, err := s.groupIDs(ctx)
	if err != nil {
		return err
	}
	res, err := adminCall(ctx, s, func(c context.Context) (kadm.DeleteGroupResponses, error) { return s.adm.DeleteGroups(c, groups...) })
	if err != nil {
		return err
	}
	var ok []string
	failed := map[string]error{}
	for _, g := range groups {
		r, found := res[g]
		switch {
		case !found:
			failed[g] = errors.New("no response")
		case r.Err != nil:
			failed[g] = r.Err
		default:
			ok = append(ok, g)
		}
	}
	quote := func(gs []string) string { return "'" + strings.Join(gs, "', '") + "'" }
	if len(failed) == 0 {
		fmt.Fprintf(s.stdout, "Deletion of requested consumer groups (%s) was successful.\n", quote(ok))
		return nil
	}
	printError(s.stdout, "Deletion of some consumer groups failed:")
	for _, g := range groups {
		if err, bad := failed[g]; bad {
			fmt.Fprintf(s.stdout, "* Group '%s' could not be deleted due to: java.util.concurrent.ExecutionException: %s\n", g, javaError(err))
		}
	}
	if len(ok) > 0 {
		fmt.Fprintf(s.stdout, "\nThese consumer groups were deleted successfully: %s\n", quote(ok))
	}
	return nil
}

func (s *kafkaService) reset(ctx context.Context) error {
	dg, sorted, err := s.describeSelected(ctx)
	if err != nil {
		return err
	}
	var plan []resetRow
	for _, g := range sorted {
		d := dg[g]
		if d.State != "Empty" && d.State != "Dead" {
			printError(s.stdout, fmt.Sprintf("Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", g, d.State))
			continue
		}
		parts, err := s.partitionsToReset(ctx, g)
		if err != nil {
			return err
		}
		offsets, err := s.prepareOffsets(ctx, g, parts)
		if err != nil {
			return err
		}
		if s.o.execute {
			os := kadm.Offsets{}
			for x, off := range offsets {
				os.Add(kadm.Offset{Topic: x.topic, Partition: x.partition, At: off, LeaderEpoch: -1})
			}
			c, cancel := s.ctx(ctx)
			resp, err := s.adm.CommitOffsets(c, g, os)
			cancel()
			if err != nil {
				return errors.New(javaError(err))
			}
			if err := resp.Error(); err != nil {
				return errors.New(javaError(err))
			}
		}
		for x, off := range offsets {
			plan = append(plan, resetRow{group: g, topic: x.topic, partition: x.partition, offset: off})
		}
	}
	sort.SliceStable(plan, func(i, j int) bool {
		a, b := plan[i], plan[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.topic != b.topic {
			return a.topic < b.topic
		}
		return a.partition < b.partition
	})
	if s.o.p.Has("export") {
		exportOffsetsToCsv(s.stdout, plan, len(s.o.groups) == 1)
		return nil
	}
	printOffsetsToReset(s.stdout, plan)
	return nil
}

func (s *kafkaService) partitionsToReset(ctx context.Context, group string) ([]tp, error) {
	if s.o.p.Has("all-topics") {
		committed, err := s.committed(ctx, group)
		if err != nil {
			return nil, err
		}
		var out []tp
		for t, ps := range committed {
			for p := range ps {
				out = append(out, tp{t, p})
			}
		}
		return out, nil
	}
	var whole []string
	var parts []tp
	for _, a := range s.o.topics {
		ta, err := parseTopicArg(a)
		if err != nil {
			return nil, &admintool.UsageError{Msg: err.Error()}
		}
		if ta.partitions == nil {
			whole = append(whole, ta.topic)
			continue
		}
		for _, p := range ta.partitions {
			parts = append(parts, tp{ta.topic, p})
		}
	}
	if len(whole) > 0 {
		td, err := adminCall(ctx, s, func(c context.Context) (kadm.TopicDetails, error) { return s.adm.ListTopics(c, whole...) })
		if err != nil {
			return nil, err
		}
		for _, t := range whole {
			d, ok := td[t]
			if !ok || d.Err != nil {
				return nil, fmt.Errorf("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.")
			}
			for _, p := range d.Partitions.Numbers() {
				parts = append(parts, tp{t, p})
			}
		}
	}
	return parts, nil
}

func topicsOf(parts []tp) []string {
	set := map[string]bool{}
	for _, x := range parts {
		set[x.topic] = true
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// prepareOffsets is prepareOffsetsToReset for the chosen scenario.
func (s *kafkaService) prepareOffsets(ctx context.Context, group string, parts []tp) (map[tp]int64, error) {
	p := s.o.p
	out := map[tp]int64{}
	topics := topicsOf(parts)
	fromList := func(kind listKind, what string) error {
		lo, err := s.listOffsets(ctx, kind, topics)
		if err != nil {
			return err
		}
		for _, x := range parts {
			o := lookup(lo, x.topic, x.partition)
			if o == nil {
				return &admintool.UsageError{Msg: fmt.Sprintf("Error getting %s offset of topic partition: %s-%d", what, x.topic, x.partition)}
			}
			out[x] = *o
		}
		return nil
	}
	switch s.o.scenario {
	case "from-file":
		rp, err := s.loadResetPlan()
		if err != nil {
			return nil, err
		}
		forGroup, ok := rp[group]
		if !ok {
			printError(s.stdout, fmt.Sprintf("No reset plan for group %s found", group))
			return out, nil
		}
		var planned []tp
		for x, off := range forGroup {
			out[x] = off
			planned = append(planned, x)
		}
		return s.checkRange(ctx, out, topicsOf(planned))
	case "to-earliest":
		return out, fromList(listStart, "starting")
	case "to-latest":
		return out, fromList(listEnd, "ending")
	case "to-offset":
		n, _ := strconv.ParseInt(p.Value("to-offset"), 10, 64)
		for _, x := range parts {
			out[x] = n
		}
		return s.checkRange(ctx, out, topics)
	case "shift-by":
		n, _ := strconv.ParseInt(p.Value("shift-by"), 10, 64)
		committed, err := s.committed(ctx, group)
		if err != nil {
			return nil, err
		}
		for _, x := range parts {
			cur, ok := committed[x.topic][x.partition]
			if !ok {
				return nil, &admintool.UsageError{Msg: fmt.Sprintf("Cannot shift offset for partition %s-%d since there is no current committed offset", x.topic, x.partition)}
			}
			out[x] = cur + n
		}
		return s.checkRange(ctx, out, topics)
	case "to-current":
		committed, err := s.committed(ctx, group)
		if err != nil {
			return nil, err
		}
		var lo kadm.ListedOffsets
		for _, x := range parts {
			if cur, ok := committed[x.topic][x.partition]; ok {
				out[x] = cur
				continue
			}
			end, err := s.fallbackEndOffset(ctx, &lo, topics, x, "Error getting ending offset of topic partition")
			if err != nil {
				return nil, err
			}
			out[x] = end
		}
		return out, nil
	case "to-datetime", "by-duration":
		var ts time.Time
		if s.o.scenario == "to-datetime" {
			ts, _ = parseDateTime(p.Value("to-datetime"))
		} else {
			d, _ := parseDuration(p.Value("by-duration"))
			ts = time.Now().Add(-d)
		}
		lo, err := adminCall(ctx, s, func(c context.Context) (kadm.ListedOffsets, error) {
			return s.adm.ListOffsetsAfterMilli(c, ts.UnixMilli(), topics...)
		})
		if err != nil {
			return nil, err
		}
		var ends kadm.ListedOffsets
		for _, x := range parts {
			if o, ok := lo.Lookup(x.topic, x.partition); ok && o.Err == nil && o.Offset >= 0 && o.Timestamp >= 0 {
				out[x] = o.Offset
				continue
			}
			fmt.Fprintf(s.stdout, "\nWarn: Partition %d from topic %s is empty. Falling back to latest known offset.\n", x.partition, x.topic)
			end, err := s.fallbackEndOffset(ctx, &ends, topics, x, "Error getting offset by timestamp of topic partition")
			if err != nil {
				return nil, err
			}
			out[x] = end
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown reset scenario %s", s.o.scenario)
}

// fallbackEndOffset is x's log end offset for a reset that falls back to
// it: the end offsets of topics are listed on first use and kept in *ends;
// a partition missing from them fails with "<what>: <topic>-<partition>".
func (s *kafkaService) fallbackEndOffset(ctx context.Context, ends *kadm.ListedOffsets, topics []string, x tp, what string) (int64, error) {
	if *ends == nil {
		lo, err := s.listOffsets(ctx, listEnd, topics)
		if err != nil {
			return 0, err
		}
		*ends = lo
	}
	o := lookup(*ends, x.topic, x.partition)
	if o == nil {
		return 0, &admintool.UsageError{Msg: fmt.Sprintf("%s: %s-%d", what, x.topic, x.partition)}
	}
	return *o, nil
}

// checkRange clamps requested offsets into [log start, log end], warning
// as Kafka does.
func (s *kafkaService) checkRange(ctx context.Context, req map[tp]int64, topics []string) (map[tp]int64, error) {
	starts, err := s.listOffsets(ctx, listStart, topics)
	if err != nil {
		return nil, err
	}
	ends, err := s.listOffsets(ctx, listEnd, topics)
	if err != nil {
		return nil, err
	}
	now := time.Now().Format("2006-01-02 15:04:05,000")
	for x, off := range req {
		end := lookup(ends, x.topic, x.partition)
		if end == nil {
			return nil, fmt.Errorf("Unexpected non-existing offset value for topic partition %s-%d", x.topic, x.partition)
		}
		if off > *end {
			fmt.Fprintf(s.stderr, "[%s] WARN New offset (%d) is higher than latest offset for topic partition %s-%d. Value will be set to %d (kafka.admin.ConsumerGroupCommand$)\n", now, off, x.topic, x.partition, *end)
			req[x] = *end
			continue
		}
		if start := lookup(starts, x.topic, x.partition); start != nil && off < *start {
			fmt.Fprintf(s.stderr, "[%s] WARN New offset (%d) is lower than earliest offset for topic partition %s-%d. Value will be set to %d (kafka.admin.ConsumerGroupCommand$)\n", now, off, x.topic, x.partition, *start)
			req[x] = *start
		}
	}
	return req, nil
}

// describeSelected describes the groups the command selects; sorted lists
// their ids once each, in the order the output uses.
func (s *kafkaService) describeSelected(ctx context.Context) (dg kadm.DescribedGroups, sorted []string, err error) {
	groups, err := s.groupIDs(ctx)
	if err != nil {
		return nil, nil, err
	}
	if dg, err = s.describeGroups(ctx, groups); err != nil {
		return nil, nil, err
	}
	sorted = slices.Clone(groups)
	sort.Strings(sorted)
	return dg, slices.Compact(sorted), nil
}
