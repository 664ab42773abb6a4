#!/bin/sh
# The demo's worker: started only once the web service is ready (initd.yaml: after: [web]),
# so its first request already finds it answering. A restarted web listens on another
# port: the worker reads it again each time.
while :; do
  port=$(cat "$DEMO_PORT_FILE")
  if python3 -c 'import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=5)
except OSError:
    sys.exit(1)' "http://127.0.0.1:$port/"; then
    echo "web answered on port $port"
  else
    echo "web did not answer on port $port"
  fi
  sleep 5
done
