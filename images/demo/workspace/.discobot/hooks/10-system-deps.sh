#!/bin/sh
#---
# name: System packages
# type: session
# run_as: root
# description: what a real image would apt-get install; root because it must
#---
echo "running as $(id -un) (uid $(id -u)), HOME=$HOME"
echo "would install: ripgrep jq (demo: nothing is installed)"
