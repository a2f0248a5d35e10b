#!/bin/sh
# matrix --peers with a stand-in worker: whatever peer the matrix names, be
# the fake_worker.py behaviour FAKE_PEER_MODE picks (default "fake").
exec python3 "$(dirname "$0")/fake_worker.py" "${FAKE_PEER_MODE:-fake}"
