"""``initd emit --from AGENT`` (initd/commands/emitfrom.py)."""

from __future__ import annotations


def test_emit_from_imports_the_one_wire_it_speaks() -> None:
    """``initd emit --from AGENT`` runs on every event of the agent: it loads its agent's
    wire, never every format's loader (the service, not emit, reads hook files)."""
    import subprocess
    import sys

    from initd.events import sources

    for agent in sources.AGENTS:
        code = ("import sys, io\n"
                "from initd.commands.emitfrom import emit_from\n"
                "sys.stdin = io.TextIOWrapper(io.BytesIO(b'garbage'))\n"
                f"emit_from({agent!r}, None, '/nonexistent/sock', 'k')\n"
                "print(' '.join(sorted(m for m in sys.modules if m.startswith('initd'))))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60, check=True)
        loaded = out.stdout.split()
        assert f"initd.events.wires.{agent}" in loaded, out
        others = [m for m in loaded if m.startswith(("initd.events.dialects",
                                                     "initd.events.engine"))
                  or (m.startswith("initd.events.wires.") and m.endswith(
                      tuple(f".{a}" for a in sources.AGENTS if a != agent)))]
        assert others == [], others
