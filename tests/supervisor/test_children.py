"""supervisor/children.py: what the supervisor's children get. The hook service runs
only for a workspace (named, or with hooks) unless told; its settings reach it as its
environment, every one resolved by root; the agent gets INITD_SOCKET only when a service
will serve there. Settings made as a boot makes them (flags, then the environment)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from initd.commands import options
from initd.config import settings
from initd.process import users
from initd.supervisor import children


def config(tmp_path: Path, *flags: str, env: dict[str, str] | None = None
           ) -> settings.Settings:
    environ = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **(env or {})}
    (tmp_path / "initd.yaml").write_text("{}\n")  # (not the machine's /etc/initd)
    cwd = os.getcwd()
    os.chdir(tmp_path)  # (the workspace defaults to the cwd)
    try:
        return settings.load(options.parse([*flags, "--config", str(tmp_path / "initd.yaml"),
                                            "--", "true"]), environ)
    finally:
        os.chdir(cwd)


def test_the_service_runs_for_a_workspace_and_not_tini_style(tmp_path: Path) -> None:
    assert children.wants_service(config(tmp_path)) is False  # `initd -- cmd` in a dir
    assert children.wants_service(config(tmp_path, "--workspace", str(tmp_path))) is True
    (tmp_path / ".discobot" / "hooks").mkdir(parents=True)
    assert children.wants_service(config(tmp_path)) is True  # a workspace with hooks
    assert children.wants_service(config(tmp_path, "--no-service")) is False


def test_the_services_settings_are_its_environment(tmp_path: Path) -> None:
    made = config(tmp_path, "--workspace", str(tmp_path), "--grace", "2.5", "--trust",
                  "--secret", "API_KEY", "--state-dir", str(tmp_path / "state"))
    agent = users.lookup("nobody")
    env = children.service_settings(made, "s-1", agent)
    assert env["INITD_WORKSPACE"] == str(tmp_path) and env["INITD_SESSION_ID"] == "s-1"
    assert (env["INITD_GRACE"], env["INITD_TRUST"], env["INITD_USER"]) == ("2.5", "1",
                                                                            "nobody")
    assert "API_KEY" in env["INITD_SECRETS"].split(",")
    assert env["INITD_STATE_DIR"] == str(tmp_path / "state")
    assert all(isinstance(value, str) for value in env.values())
    assert "INITD_HOOK_LIMITS" not in env  # (none set: none said)


def test_the_agent_hears_of_the_socket_only_when_served(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    monkeypatch.setenv("INITD_SOCKET", "/stale/from/the/image.sock")
    made = config(tmp_path, "--socket", str(tmp_path / "s.sock"))
    nobody = users.lookup("nobody")
    served = children.agent_environment(made, nobody, serving=True)
    alone = children.agent_environment(made, nobody, serving=False)
    assert served["INITD_SOCKET"] == str(tmp_path / "s.sock")
    assert "INITD_SOCKET" not in alone  # (not the image's stale one either)
    assert served["HOME"] == nobody.home and served["USER"] == "nobody"


def test_readiness_is_the_url_else_the_port_else_at_once(tmp_path: Path) -> None:
    assert children.agent_readiness(config(tmp_path)) == {}
    by_port = children.agent_readiness(config(tmp_path, "--ready-port", "8080"))
    assert by_port["ready_by"] == "port 8080" and callable(by_port["ready_check"])
    by_url = children.agent_readiness(config(tmp_path, "--ready-port", "8080",
                                             "--ready-url", "http://127.0.0.1:1/up"))
    assert by_url["ready_by"] == "http://127.0.0.1:1/up"
    assert by_url["ready_check"]() is False  # (nobody serves port 1)
