"""Command lines and stdin handling shared by the Python client drivers.

broker/e2e runs the drivers as scripts from this directory, so they import
this module by name; the options below are the contract those tests use.
"""
import argparse
import sys
import threading


def client_args(prefix):
    """Parses a *_client.py command line: produce|consume with its options."""
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["produce", "consume"])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--prefix", default=prefix)
    p.add_argument("--timeout", type=float, default=60)
    return p.parse_args()


def group_args(assignor):
    """Parses a *_group.py command line; assignor is the driver's default."""
    p = argparse.ArgumentParser()
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--assignor", default=assignor)
    p.add_argument("--session-ms", type=int, default=6000)
    p.add_argument("--instance-id", default="")
    return p.parse_args()


def stop_on_stdin_eof():
    """Returns an event set when stdin reaches EOF (the driver's clean stop)."""
    stop = threading.Event()

    def watch_stdin():
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    return stop
