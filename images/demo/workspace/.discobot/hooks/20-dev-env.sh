#!/bin/sh
#---
# name: Developer environment
# type: session
# description: per-user set-up, as the agent user with privileges dropped
#---
echo "running as $(id -un) (uid $(id -u), groups $(id -G)), HOME=$HOME"
if touch /etc/initd-demo-probe 2>/dev/null; then echo "wrote /etc (unexpected!)"; else
  echo "cannot write /etc: privileges really dropped"; fi
echo "DISCOBOT_SECRET is ${DISCOBOT_SECRET:-not visible to hooks}"
