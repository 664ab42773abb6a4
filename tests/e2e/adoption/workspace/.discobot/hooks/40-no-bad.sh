#!/bin/sh
#---
# type: file
# pattern: "*.txt"
#---
for f in $DISCOBOT_CHANGED_FILES; do
  if [ -f "$f" ] && grep -q bad "$f"; then echo "$f says bad"; exit 1; fi
done
