"""OpenAI Codex hooks: where hooks come from. ``hooks.json`` beside every config layer
(``<repo>/.codex``, ``~/.codex`` or $CODEX_HOME, the managed ``/etc/codex``), inline
``[hooks]`` tables of each layer's ``config.toml``, the managed ``requirements.toml``;
all matching hooks of all files run, concurrently; trust, the feature flag, bad files.
References: codex_hooks_support (HOOKS, SRC, CODEX, STORE).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import Session, q, session_fixture
from tests.conformance.codex_hooks_answers import read_answer
from tests.conformance.codex_hooks_support import (
    LAYERS,
    bash,
    deny,
    emit,
    group,
    handler,
    hooks_file,
    toml_hook,
    write_json,
    write_toml,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def in_json(cx: Session, layer: str, name: str) -> None:
    write_json(cx, layer, hooks_file(PreToolUse=group(handler(cx.record(name)),
                                                      matcher="Bash")))


def in_toml(cx: Session, layer: str, name: str, extra: str = "") -> None:
    write_toml(cx, layer, extra + toml_hook("PreToolUse", cx.record(name), matcher="Bash"))


def ran(cx: Session, *names: str) -> set[str]:
    return {name for name in names if cx.runs(name)}


def test_hooks_json_of_every_layer_runs(cx: Session) -> None:
    """HOOKS, "Where Codex looks for hooks": "Codex discovers hooks next to active config
    layers in either of these forms: `hooks.json`, inline `[hooks]` tables inside
    `config.toml`"; "`~/.codex/hooks.json`", "`<repo>/.codex/hooks.json`"; "Matching hooks
    from multiple files all run." SRC discovery.rs: the System layer (/etc/codex) is
    managed (``ConfigLayerSource::System { .. } => (HookSource::System, true)``)."""
    for layer in LAYERS:
        in_json(cx, layer, layer)
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert ran(cx, *LAYERS) == set(LAYERS)


def test_inline_toml_hooks_of_every_layer_run(cx: Session) -> None:
    """HOOKS: "inline `[hooks]` tables inside `config.toml`"; "`~/.codex/config.toml`",
    "`<repo>/.codex/config.toml`". SRC ``load_toml_hooks_from_layer`` reads the layer's
    ``hooks`` table with the hooks.json shape (``[[hooks.PreToolUse]]`` groups)."""
    for layer in LAYERS:
        in_toml(cx, layer, layer)
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert ran(cx, *LAYERS) == set(LAYERS)


def test_both_forms_in_one_layer_both_run(cx: Session) -> None:
    """SRC discovery.rs: when a layer has both, "loading hooks from both {json} and
    {toml}; prefer a single representation for this layer" is a warning, and both are
    loaded (``for (source_path, hook_events) in [json_hooks, toml_hooks]``)."""
    in_json(cx, "project", "json")
    in_toml(cx, "project", "toml")
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert ran(cx, "json", "toml") == {"json", "toml"}


def test_requirements_toml_hooks_are_managed_hooks(cx: Session) -> None:
    """Codex PR #18893 ("support hooks in config.toml and requirements.toml"): "so hooks
    can be configured from both `config.toml` and enterprise-managed `requirements.toml`";
    SRC ``append_managed_requirement_handlers`` loads them first, ``is_managed: true``.
    Linux's file is /etc/codex/requirements.toml (SRC discovery.rs tests:
    ``/etc/codex/requirements.toml``)."""
    write_toml(cx, "managed", toml_hook("PreToolUse", cx.record("req"), matcher="Bash"),
               name="requirements.toml")
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert cx.runs("req") == 1


def test_codex_home_moves_the_user_layer(cx: Session) -> None:
    """CODEX ``codex exec --help``: "Do not load `$CODEX_HOME/config.toml`"; the user layer
    is $CODEX_HOME (default ~/.codex). The service's CODEX_HOME is honoured."""
    elsewhere = cx.root / "codex-home"
    elsewhere.mkdir()
    (elsewhere / "hooks.json").write_text(json.dumps(
        hooks_file(PreToolUse=group(handler(cx.record("moved"))))))
    cx.env["CODEX_HOME"] = str(elsewhere)
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert cx.runs("moved") == 1


def test_matching_hooks_run_concurrently(cx: Session) -> None:
    """HOOKS: "Multiple matching command hooks for the same event are launched
    concurrently, so one hook cannot prevent another matching hook from starting."
    Two hooks (in two files) each wait (up to 60 s) for the other to have started."""
    a, b = cx.out / "a", cx.out / "b"

    def waits(mine: Path, other: Path, name: str) -> str:
        return (f"cat >/dev/null; touch {q(mine)}; i=0; while [ ! -e {q(other)} ] && "
                f"[ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
                f"[ -e {q(other)} ] && touch {q(cx.out / name)}")

    write_json(cx, "project", hooks_file(PreToolUse=group(handler(waits(a, b, "a-saw-b")))))
    write_json(cx, "user", hooks_file(PreToolUse=group(handler(waits(b, a, "b-saw-a")))))
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert (cx.out / "a-saw-b").exists() and (cx.out / "b-saw-a").exists()


def test_a_deny_in_any_layer_blocks(cx: Session) -> None:
    """HOOKS: "one hook cannot prevent another matching hook from starting"; SRC
    pre_tool_use.rs: any hook's block blocks. A user hook allows, the project's denies."""
    write_json(cx, "user", hooks_file(PreToolUse=group(handler("cat >/dev/null"))))
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(deny("project says no")))))
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "rm -rf /tmp/x")))
    assert answer.blocked and answer.reason == "project says no"


def test_unreviewed_project_and_user_hooks_run(cx: Session) -> None:
    """SRC discovery.rs: a hook that is not managed runs only when its ``trusted_hash``
    (``[hooks.state."<key>"]`` in config.toml, written when the user reviews it in
    ``/hooks``) matches (``HookTrustStatus::Trusted``), or with
    ``--dangerously-bypass-hook-trust`` ("Intended only for automation that already vets
    hook sources"). initd is that automation: its trust is the guard snapshot of the
    session's start (issue 37: "Each format's trust, snapshot and fail-closed rules are
    initd's"), so hooks nobody reviewed, in a repository Codex was never told to trust,
    run."""
    in_json(cx, "project", "project")
    in_json(cx, "user", "user")
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert ran(cx, "project", "user") == {"project", "user"}


def test_hook_files_are_fixed_at_the_session_start(cx: Session) -> None:
    """Issue 37: "Each format's trust, snapshot and fail-closed rules are initd's"; the
    brief: "The service snapshots hook files at its start". A deny written into
    .codex/hooks.json after the start does not replace the guard of the start, and a
    guard removed after the start still holds."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(deny("guard of the start")))))
    cx.start()
    write_json(cx, "project", hooks_file(PreToolUse=group(handler("cat >/dev/null"))))
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "rm -rf /tmp/x")))
    assert answer.blocked and answer.reason == "guard of the start"


def test_the_feature_flag_of_the_repository_turns_off_no_other_layer(cx: Session) -> None:
    """HOOKS: "Hooks are enabled by default. If you need to turn them off in
    `config.toml`, set: [features] hooks = false"; "`codex_hooks` still works as a
    deprecated alias." CODEX 0.171.0 ``codex features list``: "hooks  stable  true".
    Assumption (initd's, as for Claude Code's ``disableAllHooks``): a flag in the
    repository's .codex/config.toml, which the agent writes, turns off the repository's
    hooks at most, never the user's or the managed ones."""
    in_toml(cx, "project", "project", extra="[features]\nhooks = false\n")
    in_json(cx, "user", "user")
    in_json(cx, "managed", "managed")
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert ran(cx, "user", "managed") == {"user", "managed"}


@pytest.mark.parametrize("key", ["hooks", "codex_hooks"])
def test_the_users_flag_turns_off_the_users_hooks_not_managed_ones(cx: Session,
                                                                    key: str) -> None:
    """HOOKS: "[features] hooks = false" turns hooks off; "`codex_hooks` still works as a
    deprecated alias". Assumption: the user's own ~/.codex/config.toml turns off the
    user's hooks as Codex would; managed /etc/codex hooks keep running (only "Admins can
    force hooks off ... in `requirements.toml`")."""
    in_toml(cx, "user", "user", extra=f"[features]\n{key} = false\n")
    in_json(cx, "managed", "managed")
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert ran(cx, "user", "managed") == {"managed"}


def test_allow_managed_hooks_only(cx: Session) -> None:
    """openai/codex docs/config.md (PR #20319): "Admins can set top-level
    `allow_managed_hooks_only = true` in `requirements.toml` to ignore user, project, and
    session hook configs while still allowing managed hooks from requirements and managed
    config layers. This setting is only supported in `requirements.toml`; putting it in
    `config.toml` does not enable managed-hooks-only mode." """
    write_toml(cx, "managed", "allow_managed_hooks_only = true\n", name="requirements.toml")
    in_json(cx, "managed", "managed")
    in_json(cx, "user", "user")
    in_json(cx, "project", "project")
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert ran(cx, "managed", "user", "project") == {"managed"}


def test_allow_managed_hooks_only_in_config_toml_does_nothing(cx: Session) -> None:
    """docs/config.md (PR #20319): "putting it in `config.toml` does not enable
    managed-hooks-only mode" (the agent's repository cannot turn the user's hooks off)."""
    write_toml(cx, "project", "allow_managed_hooks_only = true\n")
    in_json(cx, "user", "user")
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert cx.runs("user") == 1


def test_prompt_and_agent_handlers_are_skipped(cx: Session) -> None:
    """SRC discovery.rs: "skipping prompt hook in {path}: prompt hooks are not supported
    yet", same for ``agent``; STORE skippedHandler: "Prompt and agent handlers are parsed
    by Codex but skipped in the current runtime." A file with one still loads."""
    write_json(cx, "project", hooks_file(PreToolUse=group(
        {"type": "prompt", "prompt": "is this ok?"}, {"type": "agent"},
        handler(cx.record("cmd")))))
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "ls")))
    assert cx.runs("cmd") == 1 and not answer.blocked


def test_a_users_hook_state_cannot_disable_a_managed_hook(cx: Session) -> None:
    """SRC: hooks of the System layer are ``is_managed`` whatever the user's state says
    (``hook_enabled(is_managed, ..) = is_managed || ..``): a user config.toml that marks
    the managed hook ``enabled = false`` does not turn it off."""
    in_json(cx, "managed", "managed")
    key = "/etc/codex/hooks.json:pre_tool_use:0:0"  # (SRC: ``hook_key``, its path in /etc)
    write_toml(cx, "user", f'[hooks.state."{key}"]\nenabled = false\n')
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert cx.runs("managed") == 1
