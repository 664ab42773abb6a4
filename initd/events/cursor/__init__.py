"""Cursor's hooks (https://cursor.com/docs/agent/hooks): its events, its payloads both ways,
the meaning of its hooks' answers, its matchers. Its wire (initd emit --from cursor) is
wires/cursor.py."""
