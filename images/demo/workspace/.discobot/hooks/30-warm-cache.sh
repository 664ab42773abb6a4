#!/bin/sh
#---
# name: Warm caches
# type: session
# blocking: false
# description: slow and optional, so the agent does not wait for it
#---
echo "warming caches in the background…"
sleep 2
echo "caches warm"
