"""What exec would refuse (initd/events/execsize.py), said before a hook is run."""

from __future__ import annotations

import pytest

from initd.events import execsize


@pytest.mark.parametrize(("argv", "env", "why"), [
    (["sh", "-c", "true"], {"A": "1"}, None),
    (["sh", "-c", "x" * 131_072], {}, "its argument 2 is over 128 KiB"),
    (["sh"], {"INITD_V_1": "x" * 131_061}, None),  # "INITD_V_1=" and its NUL: 131,072
    (["sh"], {"INITD_V_1": "x" * 131_062}, "its variable INITD_V_1 is over 128 KiB"),
    (["sh"], {f"V{n}": "x" * 100_000 for n in range(100)}, "more than exec takes"),
])
def test_what_exec_would_refuse(argv: list[str], env: dict[str, str], why: str | None
                                ) -> None:
    said = execsize.too_big(argv, env)
    assert said is None if why is None else why in (said or ""), said
