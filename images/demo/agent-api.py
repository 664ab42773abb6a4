#!/usr/bin/env python3
"""A stand-in agent API for the demo image: answers HTTP on :8080, and says which signals
it gets (SIGTERM keeps its default: the process dies of it, as most servers do)."""

import http.server
import os
import signal


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"agent API\n")

    def log_message(self, *args: object) -> None:
        pass


def report(signum: int, frame: object) -> None:
    print(f"agent API got {signal.Signals(signum).name}", flush=True)


signal.signal(signal.SIGUSR1, report)
signal.signal(signal.SIGHUP, report)
server = http.server.HTTPServer(("0.0.0.0", 8080), Handler)  # the pod's containerPort
print(f"agent API on :8080 as uid {os.getuid()}", flush=True)
server.serve_forever()
