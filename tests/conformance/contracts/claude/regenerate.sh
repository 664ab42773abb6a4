#!/bin/sh
# Regenerates claude-agent-sdk-0.3.240.hooks.schema.json from the pinned npm packages (needs
# node, npm and the npm registry) and says whether it differs from the vendored file.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo '{"name": "regenerate", "private": true}' > package.json
npm install --silent --no-audit --no-fund --ignore-scripts \
    ts-json-schema-generator@2.10.0 @anthropic-ai/claude-agent-sdk@0.3.240
sdk=node_modules/@anthropic-ai/claude-agent-sdk/sdk.d.ts
echo "sdk.d.ts sha256: $(sha256sum "$sdk" | cut -d' ' -f1)"
for type in HookInput HookJSONOutput Settings; do
    npx ts-json-schema-generator --path "$sdk" --type "$type" --jsDoc none \
        --no-type-check --additional-properties -o "$type.json"
done
python3 - "$here/claude-agent-sdk-0.3.240.hooks.schema.json" <<'PY'
import json, sys
merged = {}
for name in ("HookInput", "HookJSONOutput", "Settings"):
    for key, value in json.load(open(f"{name}.json"))["definitions"].items():
        assert merged.get(key, value) == value, key
        merged[key] = value
vendored = json.load(open(sys.argv[1]))["definitions"]
print("same as the vendored schema" if vendored == merged else "DIFFERS from the vendored schema")
sys.exit(0 if vendored == merged else 1)
PY
