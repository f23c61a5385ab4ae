#!/usr/bin/python3
"""A kafka-python (Debian python3-kafka) consumer-group member for the
Klassik group suite (broker/e2e/groups_kafka_python_test.go).

Subscribes to --topic in --group with the --assignor ("range" or
"roundrobin"), commits synchronously after every poll and prints the suite's
line protocol on stdout:

    ASSIGN <p>,<p>,...|-     the whole assignment after each rebalance
    REC <p> <offset> <value> every record handed to the application
    COMMIT <p> <offset>      an acknowledged commit (offset = next to read)

REC lines are flushed before the commit that covers them. EOF on stdin asks
for a clean stop: the member closes the consumer (LeaveGroup) and exits 0.
"""
import sys

import clientargs

from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


def out(line):
    sys.stdout.write(line + "\n")


class Listener(ConsumerRebalanceListener):
    def __init__(self, topic):
        self.topic = topic

    def on_partitions_revoked(self, revoked):
        # Everything handed out was committed after its poll.
        out("ASSIGN -")
        sys.stdout.flush()

    def on_partitions_assigned(self, assigned):
        ps = sorted(tp.partition for tp in assigned if tp.topic == self.topic)
        out("ASSIGN " + (",".join(str(p) for p in ps) if ps else "-"))
        sys.stdout.flush()


def main():
    a = clientargs.group_args("range")
    if a.instance_id:
        print("kafka-python has no static membership", file=sys.stderr)
        return 2

    stop = clientargs.stop_on_stdin_eof()  # EOF on stdin asks for a clean stop

    cons = KafkaConsumer(bootstrap_servers=a.bootstrap.split(","), group_id=a.group, client_id=a.name,
                         partition_assignment_strategy=[ASSIGNORS[a.assignor or "range"]],
                         enable_auto_commit=False, auto_offset_reset="earliest",
                         session_timeout_ms=a.session_ms, heartbeat_interval_ms=1000,
                         max_poll_interval_ms=30000, fetch_max_wait_ms=200)
    cons.subscribe([a.topic], listener=Listener(a.topic))
    while not stop.is_set():
        batches = cons.poll(timeout_ms=200, max_records=1000)
        if not batches:
            continue
        offsets = {}
        for tp, recs in batches.items():
            for r in recs:
                out("REC %d %d %s" % (tp.partition, r.offset, r.value.decode()))
            offsets[tp] = OffsetAndMetadata(recs[-1].offset + 1, "")
        sys.stdout.flush()
        try:
            cons.commit(offsets)
        except Exception as e:  # noqa: BLE001 - any failure means "not committed"
            print("commit failed: %r" % (e,), file=sys.stderr)
            continue
        for tp, om in offsets.items():
            out("COMMIT %d %d" % (tp.partition, om.offset))
        sys.stdout.flush()
    cons.close(autocommit=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
