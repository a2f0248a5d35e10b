#!/usr/bin/env bash
# Runs Python unittest files with the peers' interpreter (.venv-peers). A
# missing environment is a failure, not a pass: CI creates it with
# scripts/setup_peers.sh, and a silent pass would hide every adapter.
#   run_unittest.sh PYTHON TEST_FILE...
set -u
python=$1
shift
if [[ ! -x $python ]]; then
    echo "peers: $python does not exist: run scripts/setup_peers.sh to create .venv-peers"
    echo "0 passed, 1 failed"
    exit 1
fi
python=$(realpath -s "$python") # still right after the cd below
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
modules=()
for f in "$@"; do
    modules+=("$(basename "$f" .py)")
done
exec "$python" -m unittest -v "${modules[@]}"
