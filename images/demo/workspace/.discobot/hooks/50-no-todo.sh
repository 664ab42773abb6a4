#!/bin/sh
#---
# name: No TODO in commits
# type: pre-commit
# description: rejects a commit whose staged files still say TODO
#---
if git diff --cached --name-only -z | xargs -0 -r grep -n TODO -- 2>/dev/null; then
  echo "commit rejected: the lines above still say TODO" >&2
  exit 1
fi
echo "no TODO in the staged files"
