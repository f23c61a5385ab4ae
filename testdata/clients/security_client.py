#!/usr/bin/python3
"""Drives kafka-python or confluent-kafka over TLS and SASL (broker/e2e's
security matrix).

  security_client.py <kafka-python|confluent-kafka> <produce|consume|connect>
      --bootstrap HOST:PORT --security JSON [--topic T --count N --prefix P]

--security is the matrix's neutral form of a client's security settings:
{"protocol": "SSL"|"SASL_SSL", "mechanism": "SCRAM-SHA-512", "username": ..,
"password": .., "ca": CA_PEM_FILE, "cert": CLIENT_PEM_FILE, "key": KEY_FILE};
the driver turns it into the library's own configuration.

produce: sends --count records (key "k<i>", value "<prefix>-<i>", acks=all)
         and prints "produced <n>".
consume: reads --count records of every partition from the beginning (no
         group) and prints "<partition> <offset> <value>" per record.
connect: asks for the cluster's metadata once; prints "connected" (exit 0)
         or "error: <the library's exception>" (exit 3). Every wait is
         bounded by --timeout seconds.
"""
import argparse
import json
import logging
import sys
import time


def kafka_python_config(bootstrap, sec):
    c = {"bootstrap_servers": bootstrap, "security_protocol": sec["protocol"],
         "ssl_cafile": sec.get("ca"), "ssl_check_hostname": True,
         # A fixed version: no version probe loop before the first request.
         "api_version": (2, 8, 0), "request_timeout_ms": 10000,
         "reconnect_backoff_max_ms": 1000}
    if sec.get("cert"):
        c["ssl_certfile"], c["ssl_keyfile"] = sec["cert"], sec["key"]
    if sec["protocol"].startswith("SASL"):
        c["sasl_mechanism"] = sec["mechanism"]
        c["sasl_plain_username"], c["sasl_plain_password"] = sec["username"], sec["password"]
    return c


def confluent_config(bootstrap, sec):
    c = {"bootstrap.servers": bootstrap, "security.protocol": sec["protocol"],
         "ssl.ca.location": sec.get("ca"), "ssl.endpoint.identification.algorithm": "https",
         "reconnect.backoff.max.ms": 1000}
    if sec.get("cert"):
        c["ssl.certificate.location"], c["ssl.key.location"] = sec["cert"], sec["key"]
    if sec["protocol"].startswith("SASL"):
        c["sasl.mechanisms"] = sec["mechanism"]
        c["sasl.username"], c["sasl.password"] = sec["username"], sec["password"]
    return c


class Collect(logging.Handler):
    """Keeps what the library logs: kafka-python reports a failed
    authentication by logging it and closing the connection, and then
    reconnects, so the log is its verdict."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.lines = []

    def emit(self, record):
        # The function names the step that failed, e.g.
        # _try_authenticate_scram when the broker closed the connection
        # after a wrong proof (kafka-python speaks SASL's legacy unframed
        # exchange, in which a failure is a closed connection).
        msg = "%s: %s" % (record.funcName, record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            msg += " (%s: %s)" % (type(record.exc_info[1]).__name__, record.exc_info[1])
        self.lines.append(msg)


def kafka_python_connect(a, conf):
    from kafka.client_async import KafkaClient
    logs = Collect()
    logging.getLogger("kafka").addHandler(logs)
    cl = KafkaClient(**conf)
    deadline = time.time() + a.timeout
    try:
        while time.time() < deadline:
            node = cl.least_loaded_node()
            if node is not None and cl.ready(node):
                print("connected")
                return 0
            cl.poll(timeout_ms=200)
            if logs.lines:
                break
    except Exception as e:  # SSL errors are raised to the caller
        print("error: %s: %s" % (type(e).__name__, e))
        return 3
    finally:
        cl.close()
    print("error: %s" % ("; ".join(logs.lines) or "no connection within the timeout"))
    return 3


def run_kafka_python(a, sec):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    conf = kafka_python_config(a.bootstrap, sec)
    if a.mode == "connect":
        return kafka_python_connect(a, conf)
    if a.mode == "produce":
        prod = KafkaProducer(acks="all", linger_ms=5, max_block_ms=int(a.timeout * 1000), **conf)
        futures = [prod.send(a.topic, key=b"k%d" % i, value=("%s-%d" % (a.prefix, i)).encode())
                   for i in range(a.count)]
        prod.flush(timeout=a.timeout)
        for f in futures:
            f.get(timeout=a.timeout)
        prod.close()
        print("produced %d" % a.count)
        return 0
    cons = KafkaConsumer(group_id=None, enable_auto_commit=False, auto_offset_reset="earliest", **conf)
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


def run_confluent(a, sec):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient
    conf = confluent_config(a.bootstrap, sec)
    if a.mode == "connect":
        errors = []
        conf["error_cb"] = lambda err: errors.append(err)
        adm = AdminClient(conf)
        try:
            adm.list_topics(timeout=a.timeout)
        except KafkaException as e:
            # librdkafka reports the cause (authentication, certificate)
            # through the error callback; list_topics only times out.
            print("error: %s %s" % (e, "; ".join(str(x) for x in errors)))
            return 3
        print("connected")
        return 0
    if a.mode == "produce":
        errors, acked = [], [0]

        def report(err, msg):
            if err is not None:
                errors.append(str(err))
            else:
                acked[0] += 1

        prod = Producer(dict(conf, **{"enable.idempotence": True, "linger.ms": 5,
                                      "message.timeout.ms": int(a.timeout * 1000)}))
        for i in range(a.count):
            prod.produce(a.topic, key=b"k%d" % i, value=("%s-%d" % (a.prefix, i)).encode(), on_delivery=report)
            prod.poll(0)
        left = prod.flush(a.timeout)
        if errors or left or acked[0] != a.count:
            print("delivery failed: left=%d acked=%d errors=%s" % (left, acked[0], errors[:5]), file=sys.stderr)
            return 1
        print("produced %d" % a.count)
        return 0
    cons = Consumer(dict(conf, **{"group.id": "klassik-assign-only", "enable.auto.commit": False,
                                  "enable.auto.offset.store": False}))
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("lib", choices=["kafka-python", "confluent-kafka"])
    p.add_argument("mode", choices=["produce", "consume", "connect"])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--security", required=True)
    p.add_argument("--topic", default="")
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--prefix", default="")
    p.add_argument("--timeout", type=float, default=30)
    a = p.parse_args()
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    sec = json.loads(a.security)
    if a.lib == "kafka-python":
        return run_kafka_python(a, sec)
    return run_confluent(a, sec)


if __name__ == "__main__":
    sys.exit(main())
