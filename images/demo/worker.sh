#!/bin/sh
# The demo's worker: started only once the web service is ready (initd.yaml: after: [web]),
# so its first request already finds it answering.
port=$(cat "$DEMO_PORT_FILE")
while :; do
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
    "http://127.0.0.1:$port/" && echo "web answered on port $port"
  sleep 5
done
