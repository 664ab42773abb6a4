#!/usr/bin/env python3
"""The demo's web service: an HTTP server that takes a while to warm up, then says it is
ready the systemd way (READY=1 on $NOTIFY_SOCKET, sd_notify(3)). It listens on a port of
the kernel's choosing (never a fixed one) and leaves it in $DEMO_PORT_FILE for the
worker."""

import http.server
import os
import socket
import time

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
port = server.server_address[1]
print(f"warming up on port {port}", flush=True)
time.sleep(2)  # what a real server spends loading
with open(os.environ["DEMO_PORT_FILE"], "w") as f:
    f.write(str(port))
with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
    notify.sendto(b"READY=1\nSTATUS=serving on port %d" % port, os.environ["NOTIFY_SOCKET"])
print("ready", flush=True)
server.serve_forever()
