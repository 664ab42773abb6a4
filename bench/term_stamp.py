"""A CMD for the latency benchmark: prints ``ready``, then the CLOCK_MONOTONIC time at
which its SIGTERM handler ran, and exits 0. The clock is shared across PID namespaces."""

import os
import signal
import time


def on_term(signum: int, frame: object) -> None:
    print(f"term {time.monotonic():.9f}", flush=True)
    os._exit(0)


signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
while True:
    signal.pause()
