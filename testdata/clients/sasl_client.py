#!/usr/bin/python3
"""SASL round trip with Debian's python3-kafka (kafka-python) or
python3-confluent-kafka against a Klassik SASL_PLAINTEXT listener.

usage: sasl_client.py kafka-python|confluent-kafka BOOTSTRAP TOPIC MECHANISM USER PASSWORD COUNT

Produces COUNT records with acks=all, reads them back from the beginning
and prints "roundtrip <n>". An authentication failure prints
"auth-failed: <the client's error>" and exits 3; anything else exits 1.
kafka-python 2.0 authenticates with SaslHandshake v0 and raw tokens,
confluent-kafka (librdkafka) with SaslHandshake v1 and SaslAuthenticate.
"""
import sys
import time


def kafka_python(boot, topic, mech, user, pw, count):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.errors import AuthenticationFailedError, NoBrokersAvailable, KafkaError
    sec = dict(bootstrap_servers=boot, security_protocol="SASL_PLAINTEXT", sasl_mechanism=mech,
               sasl_plain_username=user, sasl_plain_password=pw, api_version_auto_timeout_ms=10000)
    try:
        prod = KafkaProducer(acks="all", retries=3, max_block_ms=15000, **sec)
        for i in range(count):
            prod.send(topic, key=b"k%d" % i, value=b"v%d" % i).get(timeout=30)
        prod.close()
    except (AuthenticationFailedError, NoBrokersAvailable) as e:
        # kafka-python reports a broker that closed the raw SASL exchange
        # as an authentication failure during the bootstrap check.
        print("auth-failed: %r" % e)
        return 3
    cons = KafkaConsumer(group_id=None, enable_auto_commit=False, auto_offset_reset="earliest", **sec)
    tp = TopicPartition(topic, 0)
    cons.assign([tp])
    cons.seek_to_beginning(tp)
    n, deadline = 0, time.time() + 30
    while n < count and time.time() < deadline:
        for recs in cons.poll(timeout_ms=500).values():
            n += len(recs)
    cons.close()
    print("roundtrip %d" % n)
    return 0 if n >= count else 1


def confluent(boot, topic, mech, user, pw, count):
    from confluent_kafka import Consumer, Producer, KafkaException, KafkaError, TopicPartition
    failures = []

    def on_error(err):
        if err.code() == KafkaError._AUTHENTICATION:
            failures.append(err.str())

    sec = {"bootstrap.servers": boot, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": mech,
           "sasl.username": user, "sasl.password": pw, "error_cb": on_error}
    prod = Producer(dict(sec, acks="all"))
    delivered = []
    for i in range(count):
        prod.produce(topic, key=b"k%d" % i, value=b"v%d" % i, on_delivery=lambda e, m: delivered.append(e))
    deadline = time.time() + 30
    while len(delivered) < count and time.time() < deadline and not failures:
        prod.poll(0.2)
    if failures:
        print("auth-failed: %s" % failures[0])
        return 3
    if len(delivered) < count or any(delivered):
        print("produce failed: %r" % delivered[:3])
        return 1
    cons = Consumer(dict(sec, **{"group.id": "sasl-py", "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    cons.assign([TopicPartition(topic, 0, 0)])
    n, deadline = 0, time.time() + 30
    while n < count and time.time() < deadline:
        m = cons.poll(0.5)
        if m is not None and m.error() is None:
            n += 1
    cons.close()
    print("roundtrip %d" % n)
    return 0 if n >= count else 1


if __name__ == "__main__":
    lib, boot, topic, mech, user, pw, count = sys.argv[1:8]
    fn = kafka_python if lib == "kafka-python" else confluent
    sys.exit(fn(boot, topic, mech, user, pw, int(count)))
