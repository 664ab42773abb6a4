#!/bin/sh
#---
# name: Start a short-lived daemon
# type: session
# description: leaves an orphan behind (initd, as PID 1, must reap it when it exits)
#---
sh -c 'sleep 2' </dev/null >/dev/null 2>&1 &
echo "left a daemon (pid $!) that exits in 2 s: PID 1 reaps it"
