"""validate(): parsed front matter into a Hook, or a HookError that names the key and the fix.

The run_as rules are the security-relevant ones: discobot's Go init ran anything but the
exact "user" as root, so a typo like ``run_as: Root`` must be an error, never root.
"""

from __future__ import annotations

from typing import Any

import pytest

from initd.hooks import model
from initd.hooks.model import Hook, HookError


def check(fields: dict[str, Any], filename: str = "lint.sh") -> Hook:
    return model.validate(fields, f"/hooks/{filename}", "/hooks", filename)


def test_defaults_for_a_session_hook() -> None:
    """Only `type` is required; everything else has the README's default."""
    hook = check({"type": "session"})
    assert hook == Hook(id="lint", name="lint.sh", type="session", path="/hooks/lint.sh",
                        directory="/hooks", description="", run_as="user", pattern=None,
                        notify_llm=True, timeout=300.0, blocking=True, warnings=())


@pytest.mark.parametrize(("fields", "expected"), [
    pytest.param({"type": "session"}, {"type": "session", "timeout": 300.0, "pattern": None},
                 id="session-default-timeout"),
    pytest.param({"type": "file", "pattern": "*.go"},
                 {"type": "file", "timeout": 900.0, "pattern": "*.go"},
                 id="file-default-timeout"),
    pytest.param({"type": "pre-commit"}, {"type": "pre-commit", "timeout": 900.0},
                 id="pre-commit-default-timeout"),
    pytest.param({"type": "session", "name": "Lint it"}, {"name": "Lint it"}, id="name"),
    pytest.param({"type": "session", "name": None}, {"name": "lint.sh"},
                 id="empty-name-is-the-file-name"),
    pytest.param({"type": "session", "description": "runs the linter"},
                 {"description": "runs the linter"}, id="description"),
    pytest.param({"type": "session", "run_as": "root"}, {"run_as": "root"}, id="run-as-root"),
    pytest.param({"type": "session", "run_as": "user"}, {"run_as": "user"}, id="run-as-user"),
    pytest.param({"type": "session", "notify_llm": False}, {"notify_llm": False},
                 id="notify-llm-false"),
    pytest.param({"type": "session", "notify_llm": True}, {"notify_llm": True},
                 id="notify-llm-true"),
    pytest.param({"type": "session", "blocking": False}, {"blocking": False},
                 id="blocking-false"),
    pytest.param({"type": "session", "timeout": 5}, {"timeout": 5.0}, id="timeout-int"),
    pytest.param({"type": "session", "timeout": 0.25}, {"timeout": 0.25}, id="timeout-float"),
    pytest.param({"type": "file", "pattern": "**/*.py", "timeout": 60},
                 {"timeout": 60.0, "pattern": "**/*.py"}, id="file-timeout-override"),
    pytest.param({"type": "session", "name": "x", "description": "d", "run_as": "user",
                  "notify_llm": False, "timeout": 12, "blocking": False},
                 {"name": "x", "description": "d", "run_as": "user", "notify_llm": False,
                  "timeout": 12.0, "blocking": False, "warnings": ()}, id="every-field"),
    pytest.param({"type": "session", "run_as": "root", "blocking": True},
                 {"run_as": "root", "blocking": True}, id="root-blocking-session"),
])
def test_validate_good(fields: dict[str, Any], expected: dict[str, Any]) -> None:
    """Each field lands in the Hook with the right type; absent ones take their default."""
    hook = check(fields)
    for key, value in expected.items():
        assert getattr(hook, key) == value, key
    assert isinstance(hook.timeout, float)


def test_id_path_and_source() -> None:
    """The id comes from the file name; path and source are passed through untouched."""
    hook = model.validate({"type": "session"}, "/ws/.discobot/hooks/Go Vet.sh",
                          "/ws/.discobot/hooks", "Go Vet.sh")
    assert (hook.id, hook.name) == ("govet", "Go Vet.sh")
    assert (hook.path, hook.directory) == ("/ws/.discobot/hooks/Go Vet.sh", "/ws/.discobot/hooks")


BAD = [
    pytest.param({"type": "session", "run_as": "Root"},
                 ["run_as", "exactly 'root' or 'user'", "'Root'"], id="run-as-Root"),
    # An empty value is not "the default": the key is there, so it says something, and
    # only the two exact words do (``run_as: ""`` used to run as the user by accident).
    pytest.param({"type": "session", "run_as": None},
                 ["run_as", "exactly 'root' or 'user'"], id="run-as-empty"),
    pytest.param({"type": "session", "run_as": ""},
                 ["run_as", "exactly 'root' or 'user'"], id="run-as-empty-text"),
    pytest.param({"type": "session", "run_as": "admin"},
                 ["run_as", "exactly 'root' or 'user'", "'admin'"], id="run-as-admin"),
    pytest.param({"type": "session", "run_as": "root "},
                 ["run_as", "exactly 'root' or 'user'"], id="run-as-root-with-space"),
    pytest.param({"type": "session", "run_as": True},
                 ["run_as", "exactly 'root' or 'user'", "True"],
                 id="run-as-yaml-boolean"),
    # Root runs the workspace's code only before the agent runs (invariant 11): a file
    # hook runs while the agent is live, a background session hook outlives boot.
    pytest.param({"type": "file", "pattern": "*.go", "run_as": "root"},
                 ["run_as: root", "file hooks run as the agent",
                  "move root work to a blocking session hook"], id="root-file-hook"),
    pytest.param({"type": "session", "run_as": "root", "blocking": False},
                 ["run_as: root with blocking: false", "must end before the agent starts",
                  "remove blocking: false"], id="root-background-session-hook"),
    pytest.param({"type": "sesion"}, ["type", "session, file, pre-commit", "'sesion'"],
                 id="type-typo"),
    pytest.param({"type": "Session"}, ["type", "session, file, pre-commit", "'Session'"],
                 id="type-capitalised"),
    pytest.param({}, ["type", "required"], id="missing-type"),
    pytest.param({"name": "lint"}, ["type", "required"], id="missing-type-with-name"),
    pytest.param({"type": None}, ["type", "required"], id="empty-type"),
    pytest.param({"type": 1}, ["type", "expected text", "int"], id="type-number"),
    pytest.param({"type": "session", "timeout": -5}, ["timeout", "> 0", "-5"],
                 id="negative-timeout"),
    pytest.param({"type": "session", "timeout": 0}, ["timeout", "> 0", "0"], id="zero-timeout"),
    pytest.param({"type": "session", "timeout": float("nan")}, ["timeout", "> 0", "nan"],
                 id="nan-timeout"),
    pytest.param({"type": "session", "timeout": True}, ["timeout", "number", "True"],
                 id="timeout-true"),
    pytest.param({"type": "session", "timeout": "5"}, ["timeout", "number", "'5'"],
                 id="timeout-string"),
    pytest.param({"type": "session", "timeout": None}, ["timeout", "number", "None"],
                 id="timeout-empty"),
    pytest.param({"type": "session", "timeout": [5]}, ["timeout", "number"], id="timeout-list"),
    pytest.param({"type": "session", "pattern": "*.go"},
                 ["pattern", "only file hooks", "session"], id="pattern-on-session-hook"),
    pytest.param({"type": "pre-commit", "pattern": "*.go"},
                 ["pattern", "only file hooks", "pre-commit"], id="pattern-on-pre-commit-hook"),
    pytest.param({"type": "session", "pattern": ""}, ["pattern", "only file hooks"],
                 id="empty-pattern-on-session-hook"),
    pytest.param({"type": "file"}, ["pattern", "required for a file hook"],
                 id="file-hook-without-pattern"),
    pytest.param({"type": "file", "pattern": ""}, ["pattern", "required for a file hook"],
                 id="file-hook-empty-pattern"),
    pytest.param({"type": "file", "pattern": ["*.go"]}, ["pattern", "expected text", "list"],
                 id="file-hook-pattern-list"),
    pytest.param({"type": "session", "notify_llm": "no"},
                 ["notify_llm", "true or false", "'no'"], id="notify-llm-string"),
    pytest.param({"type": "session", "notify_llm": 0}, ["notify_llm", "true or false", "0"],
                 id="notify-llm-zero"),
    pytest.param({"type": "session", "notify_llm": None}, ["notify_llm", "true or false"],
                 id="notify-llm-empty"),
    pytest.param({"type": "session", "blocking": "false"},
                 ["blocking", "true or false", "'false'"], id="blocking-string"),
    pytest.param({"type": "session", "name": 42}, ["name", "expected text", "42"],
                 id="name-number"),
    pytest.param({"type": "session", "description": ["a"]}, ["description", "expected text"],
                 id="description-list"),
]


@pytest.mark.parametrize(("fields", "fragments"), BAD)
def test_validate_bad(fields: dict[str, Any], fragments: list[str]) -> None:
    """A wrong field raises HookError whose message names the key and what it expects."""
    with pytest.raises(HookError) as caught:
        check(fields)
    message = str(caught.value)
    assert message.startswith(f"{fragments[0]}:"), message  # the key comes first
    for fragment in fragments:
        assert fragment in message


def test_file_name_without_a_usable_id() -> None:
    """A file name with nothing left after normalising is an error, not an empty id."""
    with pytest.raises(HookError, match=r"no usable hook id"):
        check({"type": "session"}, filename="!!!.sh")


def test_hook_error_is_a_value_error() -> None:
    """Callers that catch ValueError keep working."""
    assert issubclass(HookError, ValueError)


def test_unknown_key_warns_and_still_validates() -> None:
    """A typo'd optional key (nmae) is a warning naming it; the hook is still valid."""
    hook = check({"type": "session", "nmae": "Lint", "timout": 5})
    assert hook.name == "lint.sh"  # the typo did not set the name
    assert hook.timeout == 300.0
    assert len(hook.warnings) == 2
    assert "unknown key 'nmae'" in hook.warnings[0]
    assert "unknown key 'timout'" in hook.warnings[1]
    assert "timeout" in hook.warnings[1]  # the known keys are listed as a hint


def test_blocking_on_a_file_hook_warns() -> None:
    """`blocking` only means something on session hooks; elsewhere it warns, not fails."""
    hook = check({"type": "file", "pattern": "*.go", "blocking": False})
    assert hook.warnings == ("blocking: only session hooks use it; ignored on a file hook",)


def test_known_keys_give_no_warnings() -> None:
    """Every documented key is known: no spurious warnings for a fully specified hook."""
    hook = check({"type": "file", "name": "n", "description": "d", "run_as": "user",
                  "pattern": "*", "notify_llm": True, "timeout": 1})
    assert hook.warnings == ()


def test_hook_is_immutable() -> None:
    """A validated Hook cannot be altered afterwards (e.g. run_as flipped to root)."""
    hook = check({"type": "session"})
    with pytest.raises(AttributeError):
        hook.run_as = "root"  # type: ignore[misc]


def test_huge_integer_timeout_is_a_hook_error() -> None:
    """A timeout too large for a float is a HookError naming `timeout`, not an OverflowError."""
    with pytest.raises(HookError, match=r"^timeout:"):
        check({"type": "session", "timeout": 10**400})
