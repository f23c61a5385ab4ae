#!/usr/bin/python3
"""Drives Debian's python3-confluent-kafka (librdkafka) against a Klassik cluster.

produce: sends --count records (key "k<i>", value "<prefix>-<i>") with the
         idempotent producer (acks=all) and prints "produced <n>" when every
         delivery report succeeded.
consume: assigns every partition of --topic at the beginning (no group
         rebalance, no commits) and prints "<partition> <offset> <value>" per
         record until --count records were read or --timeout seconds pass.
"""
import sys
import time

import clientargs

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition


def main():
    a = clientargs.client_args("confluent-kafka")

    if a.mode == "produce":
        errors = []
        acked = [0]

        def report(err, msg):
            if err is not None:
                errors.append(str(err))
            else:
                acked[0] += 1

        prod = Producer({"bootstrap.servers": a.bootstrap, "enable.idempotence": True,
                         "linger.ms": 5, "message.timeout.ms": int(a.timeout * 1000)})
        for i in range(a.count):
            while True:
                try:
                    prod.produce(a.topic, key=b"k%d" % i, value=("%s-%d" % (a.prefix, i)).encode(),
                                 on_delivery=report)
                    break
                except BufferError:
                    prod.poll(0.1)
            prod.poll(0)
        left = prod.flush(a.timeout)
        if errors or left or acked[0] != a.count:
            print("delivery failed: left=%d acked=%d errors=%s" % (left, acked[0], errors[:5]), file=sys.stderr)
            return 1
        print("produced %d" % a.count)
        return 0

    cons = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "klassik-assign-only",
                     "enable.auto.commit": False, "enable.auto.offset.store": False})
    md = cons.list_topics(a.topic, timeout=a.timeout)
    parts = sorted(md.topics[a.topic].partitions.keys())
    cons.assign([TopicPartition(a.topic, p, OFFSET_BEGINNING) for p in parts])
    deadline = time.time() + a.timeout
    n = 0
    while n < a.count and time.time() < deadline:
        m = cons.poll(0.5)
        if m is None:
            continue
        if m.error():
            print("consume error: %s" % m.error(), file=sys.stderr)
            continue
        print("%d %d %s" % (m.partition(), m.offset(), m.value().decode()))
        n += 1
    cons.close()
    return 0 if n >= a.count else 2


if __name__ == "__main__":
    sys.exit(main())
