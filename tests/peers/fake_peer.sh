#!/bin/sh
# matrix --peers with a stand-in worker: whatever peer the matrix names ($1),
# answer as that peer with the fake_worker.py behaviour FAKE_PEER_MODE picks
# (default "fake").
FAKE_PEER_HELLO=$1 exec python3 "$(dirname "$0")/fake_worker.py" "${FAKE_PEER_MODE:-fake}"
