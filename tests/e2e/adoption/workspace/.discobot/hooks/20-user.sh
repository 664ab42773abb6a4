#!/bin/sh
#---
# type: session
#---
echo "user hook as uid $(id -u)"
