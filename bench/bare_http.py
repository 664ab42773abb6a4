"""The floor of an HTTP probe answer: a bare single-threaded server, one process, nothing
else to do (bench/startstop.py sets its p99 beside /readyz's, quiet and busy)."""

import socket
import sys

BODY = b'{"ready": true}'
ANSWER = (b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
          + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)

server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen(64)
while True:
    conn, _ = server.accept()
    conn.recv(65536)
    conn.sendall(ANSWER)
    conn.close()
