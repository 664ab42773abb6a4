#!/usr/bin/env python3
"""A stand-in agent API for the demo image: answers HTTP on :8080 (AGENT_PORT: another,
as the benchmarks use on the host's network), and says which signals it gets (SIGTERM
keeps its default: the process dies of it, as most servers do)."""

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
port = int(os.environ.get("AGENT_PORT", "8080"))  # 8080: the pod's containerPort
server = http.server.HTTPServer(("0.0.0.0", port), Handler)
print(f"agent API on :{port} as uid {os.getuid()}", flush=True)
server.serve_forever()
