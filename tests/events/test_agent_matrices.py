"""Each agent's conformance matrix is the code's and its reference's: the table of events
on docs/codex.md, docs/gemini.md, docs/cursor.md and docs/vscode.md (between its
``<!-- AGENT-matrix:begin -->`` and ``end`` markers) names every event the agent's wire
knows once, with the initd event the wire maps it to and a status (✓, a deviation, not
yet), and every answer field of the agent's published contract for that event (vendored,
pinned, under tests/conformance/contracts/AGENT/) is named, in the event's row or in the
page's answer fields common to every event (``<!-- AGENT-answers:begin -->`` … ``end``).
docs/claude-code.md's matrix is tests/events/test_claude_matrix.py's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from initd.events import wires

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ROOT / "tests" / "conformance" / "contracts"
STATUSES = ("✓", "deviation", "not yet")
AGENTS = ("codex", "gemini", "cursor", "vscode")


def region(agent: str, marker: str) -> str:
    text = (ROOT / "docs" / f"{agent}.md").read_text(encoding="utf-8")
    begin, end = f"<!-- {agent}-{marker}:begin -->", f"<!-- {agent}-{marker}:end -->"
    assert begin in text and end in text, f"docs/{agent}.md has no {marker} markers"
    return text[text.index(begin):text.index(end)]


def rows(agent: str) -> list[list[str]]:
    lines = [line for line in region(agent, "matrix").splitlines()
             if line.startswith("| ") and not line.startswith("| ---")][1:]  # (its head)
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


def named(text: str) -> set[str]:
    """What a cell names in backticks: `a`, and each word of `a: b` or `a.b`."""
    found = set()
    for quoted in re.findall(r"`([^`]+)`", text):
        found.add(quoted)
        found.update(re.findall(r"[A-Za-z_]+", quoted))
    return found


def contract_answers(agent: str) -> dict[str, set[str]]:
    """The agent's event name -> the answer fields its published contract gives it (a
    ``hookSpecificOutput``'s own fields too, but for its ``hookEventName``)."""
    if agent == "codex":
        made = {}
        for path in (CONTRACTS / "codex" / "hooks-0.171.0").glob("*.output.schema.json"):
            event = "".join(p.title() for p in path.name.split(".")[0].split("-"))
            made[event] = _fields(json.loads(path.read_text()))
        return made
    if agent == "vscode":
        schema = json.loads((CONTRACTS / "vscode" / "hook-output.schema.json").read_text())
        return {event: _fields(d) for event, d in schema["definitions"].items()}
    if agent == "cursor":
        schema = json.loads((CONTRACTS / "cursor" /
                             "py-cursor-hooks-0.1.1.hooks.schema.json").read_text())
        return {event: _fields(schema["$defs"][where["output"].rsplit("/", 1)[1]])
                for event, where in schema["events"].items()}
    return _typescript(CONTRACTS / "gemini" / "hooks-types.d.ts")


def _fields(schema: dict[str, object]) -> set[str]:
    properties = schema.get("properties")
    assert isinstance(properties, dict)
    found = set(properties) - {"hookSpecificOutput"}
    specific = properties.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("allOf"):  # (Codex's: a $ref)
        ref = specific["allOf"][0]["$ref"].rsplit("/", 1)[1]
        specific = schema["definitions"][ref]  # type: ignore[index]
    if isinstance(specific, dict) and isinstance(specific.get("properties"), dict):
        found |= set(specific["properties"]) - {"hookEventName"}
    return found


def _typescript(path: Path) -> dict[str, set[str]]:
    """Gemini CLI's ``interface EventOutput [extends HookOutput] { ... }``: its fields (and
    those of its ``hookSpecificOutput``), HookOutput's for each one that extends it."""
    text = path.read_text()
    blocks = dict(re.findall(r"export interface (\w+) (?:extends \w+ )?\{(.*?)\n\}", text, re.S))
    common = set(re.findall(r"^\s+(\w+)\??:", blocks["HookOutput"], re.M))
    made = {}
    for name, body in blocks.items():
        if not name.endswith("Output") or name == "HookOutput":
            continue
        own = set(re.findall(r"^\s+(\w+)\??:", body, re.M)) - {"hookEventName"}
        extends = re.search(rf"interface {name} extends HookOutput", text) is not None
        made[name.removesuffix("Output")] = own | (common if extends else set())
    made.pop("", None)
    return {event: fields - {"hookSpecificOutput"} for event, fields in made.items()}


@pytest.mark.parametrize("agent", AGENTS)
def test_every_event_of_the_agent_is_a_row_that_says_what_the_wire_does(agent: str) -> None:
    wire = wires.wire(agent)
    assert wire is not None
    seen: list[str] = []
    for row in rows(agent):
        names = [n.strip("` ") for n in row[0].split(",")]
        seen += names
        for name in names:
            assert name in wire.events, f"docs/{agent}.md: {name}: no event of its wire"
            assert row[1].startswith(f"`{wire.events[name]}`"), (agent, name, row[1])
        assert row[-1].startswith(STATUSES), (agent, row[0], row[-1])
    assert sorted(seen) == sorted(wire.events), f"docs/{agent}.md's matrix: {seen}"


@pytest.mark.parametrize("agent", AGENTS)
def test_every_answer_field_of_the_contract_is_named(agent: str) -> None:
    common = named(region(agent, "answers"))
    by_event = {n.strip("` "): named(" ".join(row)) for row in rows(agent)
                for n in row[0].split(",")}
    missing = [f"{event}: {sorted(fields - by_event.get(event, set()) - common)}"
               for event, fields in sorted(contract_answers(agent).items())
               if event in by_event and fields - by_event[event] - common]
    assert missing == [], f"docs/{agent}.md names no status for: {missing}"
    unrowed = set(contract_answers(agent)) - set(by_event)
    assert unrowed == set(), f"docs/{agent}.md has no row for {sorted(unrowed)}"
