#!/usr/bin/env python3
#---
# name: Python syntax
# type: file
# pattern: "*.py"
# description: changed Python files must compile; a failure re-prompts the agent
#---
# A file hook in Python: the changed files arrive as JSON on stdin (any name survives).
import json
import os
import sys

failed = 0
for path in json.load(sys.stdin)["files"]:
    if not os.path.exists(path):
        continue  # deleted in this turn
    try:
        with open(path, encoding="utf-8") as f:
            compile(f.read(), path, "exec")
    except SyntaxError as err:
        print(f"{path}:{err.lineno}: {err.msg}")
        failed = 1
sys.exit(failed)
