#!/usr/bin/python3
"""A confluent-kafka (Debian python3-confluent-kafka, librdkafka) consumer-group
member for the Klassik group suite (broker/e2e/groups_confluent_kafka_test.go).

Subscribes to --topic in --group with partition.assignment.strategy
--assignor (e.g. "cooperative-sticky"), commits synchronously after every
batch and prints the suite's line protocol on stdout:

    ASSIGN <p>,<p>,...|-     the whole assignment after each change
    REC <p> <offset> <value> every record handed to the application
    COMMIT <p> <offset>      an acknowledged commit (offset = next to read)

REC lines are flushed before the commit that covers them. EOF on stdin asks
for a clean stop: the member closes the consumer (LeaveGroup) and exits 0.

With KLASSIK_RDKAFKA_DEBUG_DIR set, librdkafka's consumer-group debug log
(debug=cgrp: join states, generations, each OffsetCommit's outcome) and the
member's failed commits go to <dir>/<group>-<name>-<pid>.log, for looking
into a failed run of the group suite.
"""
import logging
import os
import sys

import clientargs

from confluent_kafka import Consumer, KafkaException, TopicPartition


def out(line):
    sys.stdout.write(line + "\n")


def main():
    a = clientargs.group_args("cooperative-sticky")

    stop = clientargs.stop_on_stdin_eof()  # EOF on stdin asks for a clean stop

    conf = {"bootstrap.servers": a.bootstrap, "group.id": a.group, "client.id": a.name,
            "partition.assignment.strategy": a.assignor or "cooperative-sticky",
            "session.timeout.ms": a.session_ms, "heartbeat.interval.ms": 1000,
            "max.poll.interval.ms": 30000, "enable.auto.commit": False,
            "enable.auto.offset.store": False, "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 200, "topic.metadata.refresh.interval.ms": 5000}
    if a.instance_id:
        conf["group.instance.id"] = a.instance_id
    debug = None
    if os.environ.get("KLASSIK_RDKAFKA_DEBUG_DIR"):
        debug = logging.getLogger(a.name)
        h = logging.FileHandler(os.path.join(os.environ["KLASSIK_RDKAFKA_DEBUG_DIR"],
                                             "%s-%s-%d.log" % (a.group, a.name, os.getpid())))
        h.setFormatter(logging.Formatter("%(created).3f %(message)s"))
        debug.addHandler(h)
        debug.setLevel(logging.DEBUG)
        conf["debug"] = "cgrp"
        conf["logger"] = debug
    cons = Consumer(conf)
    owned = set()

    def show():
        ps = sorted(owned)
        out("ASSIGN " + (",".join(str(p) for p in ps) if ps else "-"))
        sys.stdout.flush()

    # librdkafka applies the (incremental) assignment itself after these
    # callbacks return; they only keep the reported set current.
    def on_assign(c, parts):
        owned.update(tp.partition for tp in parts if tp.topic == a.topic)
        show()

    def on_revoke(c, parts):
        owned.difference_update(tp.partition for tp in parts if tp.topic == a.topic)
        show()

    cons.subscribe([a.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    while not stop.is_set():
        # poll(), not consume(num_messages=...): librdkafka 2.0.x's batch
        # consume can skip messages of partitions that were paused and
        # resumed around a rebalance (fixed in librdkafka 2.1.0, #4208).
        msgs = []
        m = cons.poll(0.2)
        while m is not None and len(msgs) < 1000:
            msgs.append(m)
            m = cons.poll(0)
        if m is not None:
            msgs.append(m)
        nxt = {}
        for m in msgs:
            if m.error():
                print("consume: %s" % m.error(), file=sys.stderr)
                continue
            out("REC %d %d %s" % (m.partition(), m.offset(), m.value().decode()))
            nxt[m.partition()] = m.offset() + 1
        if not nxt:
            continue
        sys.stdout.flush()
        try:
            res = cons.commit(offsets=[TopicPartition(a.topic, p, o) for p, o in nxt.items()], asynchronous=False)
        except KafkaException as e:
            print("commit failed: %s" % e, file=sys.stderr)
            if debug:
                debug.info("member: commit of %s failed: %s" % (nxt, e))
            continue
        for tp in res or []:
            if tp.error is not None:
                print("commit %d failed: %s" % (tp.partition, tp.error), file=sys.stderr)
                continue
            out("COMMIT %d %d" % (tp.partition, tp.offset))
        sys.stdout.flush()
    cons.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
