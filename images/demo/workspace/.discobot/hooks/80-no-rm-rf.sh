#!/bin/sh
#---
# name: No rm -rf
# type: pre_tool
# tool_name: bash
# description: "blocks a bash command that removes a whole tree (exit 2, the reason on stderr)"
#---
# The event arrives as JSON on stdin: {"event": "pre_tool", "tool_name": ..., "command": ...}
command=$(python3 -c 'import json, sys; print(json.load(sys.stdin).get("command", ""))')
case "$command" in
  *"rm -rf"*|*"rm -fr"*) echo "refusing '$command': it removes a whole tree" >&2; exit 2 ;;
esac
exit 0
