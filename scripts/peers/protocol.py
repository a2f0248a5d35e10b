"""The worker's side of the JSON-lines protocol (docs/peers.md).

One JSON object per line on the protocol channel; stderr is free text. Only
the standard library: the fake worker of the C client's tests shares none of
this, but the real adapters' tests use it without any peer installed.
"""

import json
import os
import sys
import time


class Skip(Exception):
    """The peer cannot compute exactly this problem; the message says why."""


def claim_stdout():
    """The protocol channel: a private copy of fd 1, with fd 1 itself pointed
    at stderr, so a library printing to stdout (C or Python) cannot corrupt
    the protocol stream the client parses."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def send(channel, obj):
    channel.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")
    channel.flush()


def timed_calls(fn, reps):
    """Each call timed alone; the list is preallocated so nothing grows in the loop."""
    clock = time.perf_counter_ns
    ns = [0] * reps
    for r in range(reps):
        t0 = clock()
        fn()
        ns[r] = clock() - t0
    return ns


def empty_call():
    pass


def require_one_type(types, peer):
    """attnbench's types may differ per region; the peers' attention ops take
    one element type for Q, K, V and give it for O, so a mixed request is a
    different problem for them."""
    if not (types["q"] == types["kv"] == types["o"]):
        raise Skip(f"{peer} computes Q, K, V and O in one element type; asked q={types['q']}, "
                   f"kv={types['kv']}, o={types['o']}")
