package main

// Replica log-directory moves of --bootstrap-server mode: the "log_dirs"
// entries of the reassignment JSON that are not "any" (Kafka's
// TopicPartitionReplica -> directory map). --execute sends
// AlterReplicaLogDirs to each replica's broker (executeMoves, retrying a
// replica the broker does not host yet until --timeout), optionally after
// setting replica.alter.log.dirs.io.max.bytes.per.second on the moving
// brokers (--replica-alter-log-dirs-throttle); --verify asks each broker
// with DescribeLogDirs where the replica and its future replica are and
// prints Kafka's move states.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// replicaName is TopicPartitionReplica.toString: topic-partition-broker.
func (r replicaDir) replicaName() string {
	return fmt.Sprintf("%s-%d-%d", r.Part.Topic, r.Part.Partition, r.Broker)
}

// sortReplicaDirs orders moves as compareTopicPartitionReplicas: by
// broker, topic, partition.
func sortReplicaDirs(rs []replicaDir) []replicaDir {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b replicaDir) int {
		if a.Broker != b.Broker {
			return int(a.Broker - b.Broker)
		}
		if a.Part.Topic != b.Part.Topic {
			return strings.Compare(a.Part.Topic, b.Part.Topic)
		}
		return int(a.Part.Partition - b.Part.Partition)
	})
	return out
}

func replicaNames(rs []replicaDir) string {
	var names []string
	for _, r := range sortReplicaDirs(rs) {
		names = append(names, r.replicaName())
	}
	return strings.Join(names, ",")
}

// readAssignmentFileWithMoves reads --reassignment-json-file keeping its
// log directory moves (the admin backend performs them).
func readAssignmentFileWithMoves[T any](path string, parse func([]byte) (T, []replicaDir, error)) (T, []replicaDir, error) {
	var zero T
	data, err := readFile(path)
	if err != nil {
		return zero, nil, err
	}
	return parse(data)
}

// movingBrokers is calculateMovingBrokers: the brokers of the moves.
func movingBrokers(moves []replicaDir) []int32 {
	var ids []int32
	for _, m := range moves {
		if !slices.Contains(ids, m.Broker) {
			ids = append(ids, m.Broker)
		}
	}
	slices.Sort(ids)
	return ids
}

// modifyLogDirThrottle sets replica.alter.log.dirs.io.max.bytes.per.second
// on every moving broker (Kafka's modifyLogDirThrottle).
func (t *tool) modifyLogDirThrottle(a *adminBackend, moves []replicaDir, rate int64) error {
	v := strconv.FormatInt(rate, 10)
	var res []kmsg.IncrementalAlterConfigsRequestResource
	for _, id := range movingBrokers(moves) {
		res = append(res, configResource(kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(id)), kmsg.IncrementalAlterConfigOpSet,
			map[string]string{brokerLogDirThrottle: v}, []string{brokerLogDirThrottle}))
	}
	if err := a.alterConfigs(res); err != nil {
		return err
	}
	fmt.Fprintf(t.out, "The replica-alter-dir throttle limit was set to %d B/s\n", rate)
	return nil
}

// executeMoves is Kafka's executeMoves: AlterReplicaLogDirs for the moves
// not started yet, every 100 ms, until all started or timeout passed.
func (t *tool) executeMoves(a *adminBackend, moves []replicaDir, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pending := slices.Clone(moves)
	for {
		started, err := a.alterReplicaLogDirs(pending)
		if err != nil {
			return err
		}
		if len(started) > 0 {
			plural := "s"
			if len(started) == 1 {
				plural = ""
			}
			fmt.Fprintf(t.out, "Successfully started log directory move%s for: %s\n", plural, replicaNames(started))
		}
		pending = slices.DeleteFunc(pending, func(r replicaDir) bool { return slices.Contains(started, r) })
		if len(pending) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			plural := "s"
			if len(pending) == 1 {
				plural = ""
			}
			return &terse{fmt.Sprintf("Timed out before log directory move%s could be started for: %s", plural, replicaNames(pending))}
		}
		// A replica being reassigned to a new broker exists there only
		// once the controller created it: ask again.
		time.Sleep(100 * time.Millisecond)
	}
}

// alterReplicaLogDirs is Admin.alterReplicaLogDirs, one request per
// broker, and returns the moves that started; REPLICA_NOT_AVAILABLE leaves
// a move pending, any other error fails the command.
func (a *adminBackend) alterReplicaLogDirs(moves []replicaDir) ([]replicaDir, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	var started []replicaDir
	for _, id := range movingBrokers(moves) {
		req := kmsg.NewPtrAlterReplicaLogDirsRequest()
		var mine []replicaDir
		for _, m := range moves {
			if m.Broker != id {
				continue
			}
			mine = append(mine, m)
			di := slices.IndexFunc(req.Dirs, func(d kmsg.AlterReplicaLogDirsRequestDir) bool { return d.Dir == m.Dir })
			if di < 0 {
				d := kmsg.NewAlterReplicaLogDirsRequestDir()
				d.Dir = m.Dir
				req.Dirs = append(req.Dirs, d)
				di = len(req.Dirs) - 1
			}
			d := &req.Dirs[di]
			ti := slices.IndexFunc(d.Topics, func(t kmsg.AlterReplicaLogDirsRequestDirTopic) bool { return t.Topic == m.Part.Topic })
			if ti < 0 {
				rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
				rt.Topic = m.Part.Topic
				d.Topics = append(d.Topics, rt)
				ti = len(d.Topics) - 1
			}
			d.Topics[ti].Partitions = append(d.Topics[ti].Partitions, m.Part.Partition)
		}
		resp, err := req.RequestWith(ctx, a.cl.Broker(int(id)))
		if err != nil {
			return nil, &adminFailed{fmt.Sprintf("Failed to alter dir for %s", mine[0].replicaName())}
		}
		codes := map[tp]int16{}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				codes[tp{Topic: rt.Topic, Partition: rp.Partition}] = rp.ErrorCode
			}
		}
		for _, m := range sortReplicaDirs(mine) {
			code, ok := codes[m.Part]
			switch {
			case !ok:
				return nil, &adminFailed{fmt.Sprintf("Failed to alter dir for %s", m.replicaName())}
			case code == 0:
				started = append(started, m)
			case code == kerr.ReplicaNotAvailable.Code:
				// Not on the broker yet: it remembers the directory.
			default:
				return nil, &adminFailed{fmt.Sprintf("Failed to alter dir for %s", m.replicaName())}
			}
		}
	}
	return started, nil
}

// replicaLogDirInfo is DescribeReplicaLogDirsResult.ReplicaLogDirInfo: the
// directories of a replica's current and future logs ("" for none).
type replicaLogDirInfo struct {
	current, future string
}

// describeReplicaLogDirs is Admin.describeReplicaLogDirs: DescribeLogDirs
// for the moves' partitions on each of their brokers. Offline directories
// are skipped; any other directory error fails the call.
func (a *adminBackend) describeReplicaLogDirs(moves []replicaDir) (map[replicaDir]replicaLogDirInfo, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	out := map[replicaDir]replicaLogDirInfo{}
	for _, id := range movingBrokers(moves) {
		req := kmsg.NewPtrDescribeLogDirsRequest()
		req.Topics = []kmsg.DescribeLogDirsRequestTopic{}
		for _, m := range moves {
			if m.Broker != id {
				continue
			}
			ti := slices.IndexFunc(req.Topics, func(t kmsg.DescribeLogDirsRequestTopic) bool { return t.Topic == m.Part.Topic })
			if ti < 0 {
				rt := kmsg.NewDescribeLogDirsRequestTopic()
				rt.Topic = m.Part.Topic
				req.Topics = append(req.Topics, rt)
				ti = len(req.Topics) - 1
			}
			if !slices.Contains(req.Topics[ti].Partitions, m.Part.Partition) {
				req.Topics[ti].Partitions = append(req.Topics[ti].Partitions, m.Part.Partition)
			}
		}
		resp, err := req.RequestWith(ctx, a.cl.Broker(int(id)))
		if err != nil {
			return nil, &admintool.ExecutionError{Cause: admintool.ClientError(err, "DESCRIBE_LOG_DIRS")}
		}
		where := map[tp]replicaLogDirInfo{}
		for _, d := range resp.Dirs {
			if d.ErrorCode == kerr.KafkaStorageError.Code {
				continue
			}
			if d.ErrorCode != 0 {
				ke := admintool.NewKafkaError(d.ErrorCode, nil)
				return nil, &admintool.ExecutionError{Cause: fmt.Errorf("java.lang.IllegalStateException: The error org.apache.kafka.common.errors.%s for log directory %s in the response from broker %d is illegal", ke.Class, d.Dir, id)}
			}
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					k := tp{Topic: t.Topic, Partition: p.Partition}
					info := where[k]
					if p.IsFuture {
						info.future = d.Dir
					} else {
						info.current = d.Dir
					}
					where[k] = info
				}
			}
		}
		for _, m := range moves {
			if m.Broker == id {
				out[m] = where[m.Part]
			}
		}
	}
	return out, nil
}

// verifyReplicaMoves prints Kafka's replica move states and reports
// whether a move is still going on (not done).
func (t *tool) verifyReplicaMoves(a *adminBackend, moves []replicaDir) (ongoing bool, err error) {
	infos, err := a.describeReplicaLogDirs(moves)
	if err != nil {
		return false, err
	}
	var lines []string
	for _, m := range sortReplicaDirs(moves) {
		info := infos[m]
		switch {
		case info.current == "":
			lines = append(lines, fmt.Sprintf("Partition %s is not found in any live log dir on broker %d. There is likely an offline log directory on the broker.", m.Part, m.Broker))
			ongoing = true
		case info.future == "" && info.current == m.Dir:
			lines = append(lines, fmt.Sprintf("Reassignment of replica %s completed successfully.", m.replicaName()))
		case info.future == "":
			// A cancelled move counts as done, as Kafka's CancelledMoveState.
			lines = append(lines, fmt.Sprintf("Partition %s on broker %d is not being moved from log dir %s to %s.", m.Part, m.Broker, info.current, m.Dir))
		case info.future == m.Dir:
			lines = append(lines, fmt.Sprintf("Reassignment of replica %s is still in progress.", m.replicaName()))
			ongoing = true
		default:
			lines = append(lines, fmt.Sprintf("Partition %s on broker %d is being moved to log dir %s instead of %s.", m.Part, m.Broker, info.future, m.Dir))
			ongoing = true
		}
	}
	fmt.Fprintln(t.out, strings.Join(lines, "\n"))
	return ongoing, nil
}

// cancelMoves is the log directory part of cancelAssignment: every move
// still copying is sent back to its current directory, which drops the
// future replica.
func (t *tool) cancelMoves(a *adminBackend, moves []replicaDir, timeout time.Duration) error {
	var back []replicaDir
	if len(moves) > 0 {
		infos, err := a.describeReplicaLogDirs(moves)
		if err != nil {
			return err
		}
		for _, m := range moves {
			if info := infos[m]; info.current != "" && info.future != "" {
				back = append(back, replicaDir{Part: m.Part, Broker: m.Broker, Dir: info.current})
			}
		}
	}
	if len(back) == 0 {
		fmt.Fprintln(t.out, "None of the specified partition moves are active.")
		return nil
	}
	return t.executeMoves(a, back, timeout)
}
