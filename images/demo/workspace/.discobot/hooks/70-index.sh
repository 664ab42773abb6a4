#!/bin/sh
#---
# name: Index
# type: file
# pattern: "*.py"
# notify_llm: false
# description: as the agent, like every file hook (root runs the workspace's code only before the agent starts)
#---
echo "indexed as $(id -un): $DISCOBOT_CHANGED_FILES"
