#!/bin/sh
#---
# name: Optional tool check
# type: session
# timeout: 10
#---
echo "looking for an optional linter…"
echo "not found (this hook fails on purpose: boot goes on)" >&2
exit 1
