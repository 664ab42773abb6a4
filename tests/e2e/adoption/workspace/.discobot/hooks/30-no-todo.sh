#!/bin/sh
#---
# type: pre-commit
#---
if git diff --cached --name-only -z | xargs -0 -r grep -n TODO -- 2>/dev/null; then
  echo "commit rejected: the lines above still say TODO" >&2
  exit 1
fi
