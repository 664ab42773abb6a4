#!/bin/sh
#---
# type: session
# description: leaves an orphan behind, for PID 1 to reap
#---
(sleep 2 &)
echo "left a daemon"
