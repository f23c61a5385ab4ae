#!/usr/bin/python3
"""Drives Debian's python3-kafka (kafka-python) against a Klassik cluster.

produce: sends --count records (key "k<i>", value "<prefix>-<i>") with acks=all
         and prints "produced <n>" once every send is acknowledged.
consume: assigns every partition of --topic, reads from the beginning without a
         consumer group and prints "<partition> <offset> <value>" per record
         until --count records were read or --timeout seconds pass.
"""
import sys
import time

import clientargs

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def main():
    a = clientargs.client_args("kafka-python")

    if a.mode == "produce":
        prod = KafkaProducer(bootstrap_servers=a.bootstrap, acks="all", retries=5,
                             max_in_flight_requests_per_connection=1, linger_ms=5)
        futures = [prod.send(a.topic, key=b"k%d" % i, value=("%s-%d" % (a.prefix, i)).encode())
                   for i in range(a.count)]
        prod.flush(timeout=a.timeout)
        for f in futures:
            f.get(timeout=a.timeout)
        prod.close()
        print("produced %d" % a.count)
        return 0

    cons = KafkaConsumer(bootstrap_servers=a.bootstrap, group_id=None,
                         enable_auto_commit=False, auto_offset_reset="earliest")
    deadline = time.time() + a.timeout
    parts = None
    while parts is None and time.time() < deadline:
        parts = cons.partitions_for_topic(a.topic)
        if parts is None:
            time.sleep(0.2)
    if parts is None:
        print("topic %s not found" % a.topic, file=sys.stderr)
        return 1
    tps = [TopicPartition(a.topic, p) for p in sorted(parts)]
    cons.assign(tps)
    cons.seek_to_beginning(*tps)
    n = 0
    while n < a.count and time.time() < deadline:
        for tp, recs in cons.poll(timeout_ms=500).items():
            for r in recs:
                print("%d %d %s" % (tp.partition, r.offset, r.value.decode()))
                n += 1
    cons.close()
    return 0 if n >= a.count else 2


if __name__ == "__main__":
    sys.exit(main())
