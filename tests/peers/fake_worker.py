#!/usr/bin/env python3
"""A stand-in for scripts/peers/worker.py, for harness/peer_client.c's tests:
the same protocol, no library (plain Python, no numpy). The PEER argument
picks a behaviour:

  fake      a well-behaved worker: O[e] = Q[0] + e (so the test sees the
            buffer travel both ways); time ns = 1000*(r+1), empty 10*(r+1)
  nolib     hello ok:false (the library does not import), then exit 0
  skipper   setup answers skip; time answers an error
  garbage   setup answers a line that is not JSON
  dies      setup kills the process (exit 3) without a reply
  hangs     setup never answers
  quitter   exits right after hello, before reading anything
  shortns   time answers one number fewer than asked
  chunked   like fake, but each reply arrives in three writes 50 ms apart
  slow      like fake, but each setup takes 2 s (a cell that costs wall time)
  slowtime  like fake, but each time request takes 0.3 s (rounds that cost
            wall time)
"""

import json
import mmap
import os
import struct
import sys
import time


CHUNKED = len(sys.argv) > 1 and sys.argv[1] == "chunked"


def send(obj):
    text = json.dumps(obj) + "\n"
    if CHUNKED:  # the client must put a line together from partial reads
        third = len(text) // 3
        for part in (text[:third], text[third:2 * third], text[2 * third:]):
            sys.stdout.write(part)
            sys.stdout.flush()
            time.sleep(0.05)
        return
    sys.stdout.write(text)
    sys.stdout.flush()


def setup(req):
    s = req["shape"]
    t = req["types"]
    if t["q"] != "f32" or t["o"] != "f32":
        return {"ok": False, "skip": "the fake worker does f32 only"}
    fd = os.open(req["buffer"], os.O_RDWR)
    size = os.fstat(fd).st_size
    m = mmap.mmap(fd, size, mmap.MAP_SHARED)
    os.close(fd)
    q0 = struct.unpack_from("<f", m, req["offsets"]["q"])[0]
    n_o = s["batch"] * s["heads_q"] * s["n_q"] * s["d_v"]
    off = req["offsets"]["o"]
    struct.pack_into(f"<{n_o}f", m, off, *[q0 + e for e in range(n_o)])
    m.close()
    shape = ",".join(f"{k}={s[k]}" for k in ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "d_k", "d_v", "causal"))
    run = f",copies={req['copies']},pages={req.get('pages', 'default')}"
    return {"ok": True, "op": f"fake({shape},scale={s['scale']},threads={req['threads']},"
                              f"types={t['q']}/{t['kv']}/{t['o']}{run})"}


def main():
    mode = sys.argv[1]
    # The name the hello gives: the mode, or the peer a matrix run asked for
    # (tests/peers/fake_peer.sh stands in for every peer).
    hello = os.environ.get("FAKE_PEER_HELLO") or mode
    if mode == "nolib":
        send({"hello": hello, "ok": False, "reason": "cannot import nolib: No module named 'nolib'"})
        return 0
    # A quote and a backslash in the version: the sidecar must stay JSON.
    send({"hello": hello, "ok": True, "version": '0.0-"fake"\\x', "pid": os.getpid()})
    if mode == "quitter":
        return 0
    for line in sys.stdin:
        req = json.loads(line)
        cmd = req.get("cmd")
        if cmd == "quit":
            return 0
        print(f"fake worker {mode}: {cmd}", file=sys.stderr)  # stderr is free text
        if cmd == "setup":
            if mode == "garbage":
                sys.stdout.write("Segmentation fault? no: this is not JSON\n")
                sys.stdout.flush()
                continue
            if mode == "dies":
                os._exit(3)
            if mode == "hangs":
                time.sleep(3600)
            if mode == "skipper":
                send({"ok": False, "skip": "fake cannot compute exactly this problem"})
                continue
            if mode == "slow":
                time.sleep(2)
            send(setup(req))
        elif cmd in ("time", "empty"):
            if mode == "skipper":
                send({"ok": False, "error": "'time' before a successful 'setup'"})
                continue
            if mode == "slowtime" and cmd == "time":
                time.sleep(0.3)
            n = req["reps"] - (1 if mode == "shortns" else 0)
            unit = 1000 if cmd == "time" else 10
            send({"ok": True, "ns": [unit * (r + 1) for r in range(n)]})
        else:
            send({"ok": False, "error": f"unknown cmd {cmd!r}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
