"""pid1/reaped.py: PID 1's count of what it reaped, on a page the supervisor it forks
shares; and cli.py's glance that decides whether PID 1 makes the page at all."""

from __future__ import annotations

import os
from pathlib import Path

from initd import cli
from initd.config import paths
from initd.pid1 import reaped


def test_what_one_side_of_a_fork_adds_the_other_reads() -> None:
    page = reaped.Reaped()
    page.add(2)
    child = os.fork()
    if child == 0:  # the writer's side, as PID 1 is the supervisor's parent
        page.add(40)
        os._exit(0)
    os.waitpid(child, 0)
    assert page.read() == 42  # (shared: not the copy this side kept)
    assert page.count == 2  # the writer's own count is its own


def test_the_count_is_a_whole_64_bit_number() -> None:
    page = reaped.Reaped()
    page.add(2**40 + 7)
    assert page.read() == 2**40 + 7


def test_make_keeps_the_page_for_the_supervisor() -> None:
    before = reaped.shared
    try:
        made = reaped.make()
        assert reaped.shared is made
    finally:
        reaped.shared = before


def test_the_glance_makes_a_page_only_when_a_probe_port_may_be_on(tmp_path: Path) -> None:
    nowhere = str(tmp_path / "no-config.yaml")
    assert not cli.may_scrape(["--", "true"], {}, nowhere)
    assert not cli.may_scrape(["--user", "agent", "--", "sh", "-c", "--x"], {}, nowhere)
    assert not cli.may_scrape(["--user=agent", "true"], {"PATH": "/bin"}, nowhere)
    assert cli.may_scrape(["--health-port", "9", "--", "true"], {}, nowhere)
    assert cli.may_scrape(["--health-port=9", "true"], {}, nowhere)
    assert cli.may_scrape(["--config", "/etc/x.yaml", "true"], {}, nowhere)
    for name in cli.SCRAPE_VARIABLES:
        assert cli.may_scrape(["--", "true"], {name: "1"}, nowhere), name
    (tmp_path / "initd.yaml").write_text("health_port: 9\n")
    assert cli.may_scrape(["--", "true"], {}, str(tmp_path / "initd.yaml"))


def test_the_glance_looks_where_the_settings_do() -> None:
    assert cli.DEFAULT_CONFIG == paths.DEFAULT_CONFIG
