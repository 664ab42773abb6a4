#!/bin/sh
#---
# type: session
# run_as: root
#---
echo "root hook as uid $(id -u)"
