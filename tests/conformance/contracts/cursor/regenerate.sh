#!/bin/sh
# Rebuilds py-cursor-hooks-0.1.1.hooks.schema.json from the registry (PyPI, pip) and says
# whether it still matches the committed one. Needs pip and pydantic 2 (any Python >= 3.10:
# the wheel says Requires-Python >= 3.14 only because of its CLI; models.py is plain
# pydantic). Usage: sh regenerate.sh [PYTHON]
set -eu
PY=${1:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.14 \
    -d "$TMP" py-cursor-hooks==0.1.1
WHEEL="$TMP/py_cursor_hooks-0.1.1-py3-none-any.whl"
echo "39cc913378c92db842b6c1424adeb701ef0ed1f22c2cd5d18085a757f5813a83  $WHEEL" | sha256sum -c -
mkdir "$TMP/src" && cd "$TMP/src" && "$PY" -m zipfile -e "$WHEEL" .
PYTHONPATH="$TMP/src" "$PY" - "$TMP/out.json" <<'PYEOF'
import json
import sys

from pydantic.json_schema import models_json_schema

from hooks.interfaces import CursorHooks
from hooks.runner import build_hook_table

table = build_hook_table(CursorHooks())
models = sorted({m for spec in table.values() for m in (spec.input_model, spec.output_model)},
                key=lambda m: m.__name__)
_, top = models_json_schema([(m, "validation") for m in models], by_alias=True,
                            ref_template="#/$defs/{model}")
# A field with AliasChoices (Attachment.file_path: "filePath" or "file_path") is written by
# pydantic as its first alias only; the model accepts each, and so does the schema here.
import inspect

import pydantic

from hooks import models as package
for _, m in inspect.getmembers(package, inspect.isclass):
    if not issubclass(m, pydantic.BaseModel) or m.__name__ not in top["$defs"]:
        continue
    schema = top["$defs"][m.__name__]
    for name, info in m.model_fields.items():
        choices = getattr(info.validation_alias, "choices", None)
        if not choices:
            continue
        first = schema["properties"][choices[0]]
        for c in choices:
            schema["properties"][c] = first
        if choices[0] in schema.get("required", []):
            schema["required"].remove(choices[0])
            schema["anyOf"] = [{"required": [c]} for c in choices]
out = {"$schema": "https://json-schema.org/draft/2020-12/schema",
       "title": "py-cursor-hooks 0.1.1: hook inputs and outputs (hooks/models.py)",
       "events": {event.value: {"input": f"#/$defs/{spec.input_model.__name__}",
                                "output": f"#/$defs/{spec.output_model.__name__}"}
                  for event, spec in sorted(table.items(), key=lambda kv: kv[0].value)},
       "$defs": top["$defs"]}
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=2, sort_keys=True)
    f.write("\n")
PYEOF
if cmp -s "$TMP/out.json" "$HERE/py-cursor-hooks-0.1.1.hooks.schema.json"; then
    echo "py-cursor-hooks-0.1.1.hooks.schema.json: unchanged"
else
    cp "$TMP/out.json" "$HERE/py-cursor-hooks-0.1.1.hooks.schema.json"
    echo "py-cursor-hooks-0.1.1.hooks.schema.json: rewritten (see git diff)"
fi
