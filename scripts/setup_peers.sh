#!/usr/bin/env bash
# Creates .venv-peers/, the Python environment of the peer adapters
# (scripts/peers/: PyTorch, ONNX Runtime, OpenVINO), from the exact pins of
# scripts/requirements-peers.txt — and nothing else. Idempotent: rebuilt only
# when the pins change (a stamp holds their sha256).
#
#   scripts/setup_peers.sh
#
# The pins are a complete lock installed with --no-deps; the file says why
# (PyPI's torch is the CUDA build and declares ~5.7 GB of dependencies).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv-peers"
pins="$root/scripts/requirements-peers.txt"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$pins" | cut -d' ' -f1)
# One set-up at a time (two would delete each other's files mid-install);
# the lock is on the pins file itself, so no lock file is left behind. A
# waiter then finds the stamp in place and is done.
exec 9<"$pins"
flock 9
if [[ -x $venv/bin/python3 && -f $stamp && $(cat "$stamp") == "$want" ]]; then
    exit 0
fi

echo "setup_peers: creating $venv from $pins" >&2
rm -rf "$venv"
if ! python3 -m venv "$venv"; then
    echo "setup_peers: FAILED: python3 -m venv $venv (is python3-venv installed?)" >&2
    exit 1
fi
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$pins"; then
    echo "setup_peers: FAILED: pip install --no-deps -r $pins (see pip's message above);" \
        "$venv is incomplete and will be rebuilt on the next run" >&2
    exit 1
fi
# The lock is what makes --no-deps safe: each peer must import.
if ! "$venv/bin/python3" -c "import numpy, torch, onnxruntime, openvino, onnx, ml_dtypes"; then
    echo "setup_peers: FAILED: a peer does not import from $venv" >&2
    exit 1
fi
echo "$want" > "$stamp"
