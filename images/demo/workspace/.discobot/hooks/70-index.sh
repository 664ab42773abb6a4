#!/bin/sh
#---
# name: System index
# type: file
# pattern: "*.py"
# run_as: root
# notify_llm: false
# description: as root, from initd's copy taken at boot (the agent cannot edit it into root)
#---
echo "indexed as $(id -un): $DISCOBOT_CHANGED_FILES"
