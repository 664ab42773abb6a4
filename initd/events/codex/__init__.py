"""OpenAI Codex's own rules, beside its loader (dialects/codex.py): its events and tool
names (names), its ``apply_patch`` envelope read and written (patch), its payloads in
initd's shape and back (shape), what its hooks' exit codes and JSON answers mean
(answers). How Codex calls initd is wires/codex.py."""
