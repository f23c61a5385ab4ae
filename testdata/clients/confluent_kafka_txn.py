#!/usr/bin/python3
"""Drives Debian's python3-confluent-kafka (librdkafka) transactions against Klassik.

broker/e2e/txn_driver_test.go describes the story and the line protocol.

produce: the transactional story with --txn-id: init_transactions, then
         A committed; B aborted after send_offsets_to_transaction; C (one
         record per input record read by a read_committed consumer in
         --group) committed with send_offsets_to_transaction; F written,
         then a second producer with the same transactional.id runs
         init_transactions and the first one's commit_transaction must fail
         fenced; E committed by the second producer.
consume: assigns every partition of --topic at the beginning with
         isolation.level --isolation and prints "REC <p> <offset> <key>
         <value>" until each partition's "END" sentinel (or --timeout).
"""
import argparse
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition

TIMEOUT = 30.0


def out(line):
    print(line, flush=True)


def args():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["produce", "consume"])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--txn-id", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--partitions", type=int, required=True)
    p.add_argument("--small", type=int, required=True)
    p.add_argument("--input-count", type=int, required=True)
    p.add_argument("--isolation", choices=["read_committed", "read_uncommitted"], default="read_committed")
    p.add_argument("--timeout", type=float, default=TIMEOUT)
    return p.parse_args()


def producer(a):
    return Producer({"bootstrap.servers": a.bootstrap, "transactional.id": a.txn_id,
                     "transaction.timeout.ms": 30000, "linger.ms": 5,
                     "message.timeout.ms": 30000, "debug": "eos"})


def produce(a, p, label, indexes):
    errors = []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))

    for i in indexes:
        p.produce(a.topic, partition=i % a.partitions, key=("%s-%d" % (label, i)).encode(),
                  value=("%s-%s-%d" % (a.prefix, label, i)).encode(), on_delivery=report)
    left = p.flush(TIMEOUT)
    if errors or left:
        raise RuntimeError("produce %s: left=%d errors=%s" % (label, left, errors[:5]))


def committed_line(cons, a):
    parts = [TopicPartition(a.input, i) for i in range(a.partitions)]
    got = cons.committed(parts, timeout=TIMEOUT)
    return ",".join("%d:%d" % (tp.partition, tp.offset if tp.offset >= 0 else -1)
                    for tp in sorted(got, key=lambda tp: tp.partition))


def read_input(cons, a):
    """Polls the group consumer until every input record was read; returns the indexes."""
    seen = set()
    deadline = time.time() + a.timeout
    while len(seen) < a.input_count:
        if time.time() > deadline:
            raise RuntimeError("read %d of %d input records" % (len(seen), a.input_count))
        m = cons.poll(0.5)
        if m is None:
            continue
        if m.error():
            print("input consume error: %s" % m.error(), file=sys.stderr)
            continue
        seen.add(int(m.value().decode()[len("in-"):]))
    return sorted(seen)


def run_produce(a):
    p1 = producer(a)
    p1.init_transactions(TIMEOUT)
    out("STEP init")
    cons = Consumer({"bootstrap.servers": a.bootstrap, "group.id": a.group, "isolation.level": "read_committed",
                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                     "session.timeout.ms": 10000})
    cons.subscribe([a.input])

    p1.begin_transaction()
    produce(a, p1, "A", range(a.small))
    p1.commit_transaction(TIMEOUT)
    out("STEP commit A")

    idx = read_input(cons, a)
    positions = cons.position(cons.assignment())
    out("STEP consumed input: positions %s" % ",".join("%d:%d" % (tp.partition, tp.offset) for tp in positions))
    p1.begin_transaction()
    produce(a, p1, "B", range(a.small))
    p1.send_offsets_to_transaction(positions, cons.consumer_group_metadata(), TIMEOUT)
    p1.abort_transaction(TIMEOUT)
    out("STEP abort B")
    out("OFFSETS after-abort %s" % committed_line(cons, a))

    # The application would rewind to the committed offsets (none) and
    # read the same records again; C transforms what was read.
    p1.begin_transaction()
    produce(a, p1, "C", idx)
    p1.send_offsets_to_transaction(positions, cons.consumer_group_metadata(), TIMEOUT)
    p1.commit_transaction(TIMEOUT)
    out("STEP commit C")
    out("OFFSETS after-commit %s" % committed_line(cons, a))
    cons.close()

    p1.begin_transaction()
    produce(a, p1, "F", range(a.small))
    out("STEP written F")
    p2 = producer(a)
    p2.init_transactions(TIMEOUT)
    out("STEP init second")
    try:
        p1.commit_transaction(TIMEOUT)
        out("STEP commit F (not fenced)")
    except KafkaException as e:
        err = e.args[0]
        out("FENCED %s: %s (fatal=%s)" % (err.name(), err.str(), err.fatal()))

    p2.begin_transaction()
    produce(a, p2, "E", range(a.small))
    p2.commit_transaction(TIMEOUT)
    out("STEP commit E")
    return 0


def run_consume(a):
    cons = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "klassik-txn-assign-only",
                     "enable.auto.commit": False, "enable.auto.offset.store": False,
                     "isolation.level": a.isolation})
    cons.assign([TopicPartition(a.topic, i, OFFSET_BEGINNING) for i in range(a.partitions)])
    ended = set()
    deadline = time.time() + a.timeout
    while len(ended) < a.partitions and time.time() < deadline:
        m = cons.poll(0.5)
        if m is None:
            continue
        if m.error():
            print("consume error: %s" % m.error(), file=sys.stderr)
            continue
        key = m.key().decode()
        out("REC %d %d %s %s" % (m.partition(), m.offset(), key, m.value().decode()))
        if key == "END":
            ended.add(m.partition())
    cons.close()
    if len(ended) < a.partitions:
        print("sentinels of %d of %d partitions read within %.0fs" % (len(ended), a.partitions, a.timeout), file=sys.stderr)
        return 2
    return 0


def main():
    a = args()
    if a.mode == "produce":
        return run_produce(a)
    return run_consume(a)


if __name__ == "__main__":
    sys.exit(main())
