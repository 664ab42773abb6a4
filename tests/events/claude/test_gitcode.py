"""Shell code git runs from the strings of a command line (initd/events/claude/gitcode.py):
the code in each variable and configuration key git runs, what is data, and what is
known only when git runs it (Unknown: the rule matches). The attacks are in
tests/security/test_rule_gitcode.py."""

from __future__ import annotations

import pytest

from initd.events.claude import gitcode
from initd.events.claude.wildcards import HOLE
from initd.events.claude.words import Unknown


def w(*texts: str | None) -> tuple[tuple[str | None, ...], ...]:
    return tuple((HOLE,) if t is None else (t,) for t in texts)


@pytest.mark.parametrize(("name", "value", "code"), [
    ("GIT_PAGER", "rm -rf x", "rm -rf x"), ("EDITOR", "vim", "vim"),
    ("GIT_SSH_COMMAND", "ssh -i k", "ssh -i k"), ("GIT_PAGER", "", None),  # none
    ("GIT_AUTHOR_NAME", "x", None), ("GIT_DIR", "/x", None), ("GIT_TRACE2", "1", None),
    ("HOME", "/h", None), ("PATH", "/x", None),  # (PATH is rebinding.py's)
])
def test_the_code_in_a_variable(name: str, value: str, code: str | None) -> None:
    assert gitcode.variable(name, (value,)) == code


@pytest.mark.parametrize(("name", "value"), [
    ("GIT_PAGER", None), ("GIT_PAGER", (HOLE,)),  # known only when it runs
    ("GIT_CONFIG_PARAMETERS", ("'alias.x=!rm'",)), ("GIT_CONFIG_COUNT", ("1",)),
    ("GIT_ALLOW_PROTOCOL", ("ext",)), ("GIT_EXEC_PATH", ("/tmp",)),
])
def test_a_variable_git_may_run_is_unknown(name: str, value: tuple[str | None, ...] | None
                                           ) -> None:
    with pytest.raises(Unknown):
        gitcode.variable(name, value)


@pytest.mark.parametrize(("key", "value", "code"), [
    ("alias.x", "!rm -rf x", "rm -rf x"), ("core.pager", "less", "less"),
    ("Core.Pager", "less", "less"),  # keys are case-blind
    ("core.pager", "", None), ("pager.log", "false", None), ("pager.log", "rm x", "rm x"),
    ("core.fsmonitor", "true", None), ("core.fsmonitor", "./watch", "./watch"),
    ("diff.Tool.command", "rm", "rm"), ("filter.lfs.smudge", "git-lfs smudge %f",
                                        "git-lfs smudge %f"),
    ("credential.helper", "store", "git credential-store"),
    ("credential.helper", "!rm x", "rm x"), ("credential.helper", "/bin/helper",
                                             "/bin/helper"),
    ("user.name", "x", None), ("color.ui", "auto", None), ("pull.rebase", "true", None),
    ("init.defaultBranch", "main", None),
])
def test_the_code_in_a_key(key: str, value: str, code: str | None) -> None:
    assert gitcode.config(key, value) == code


@pytest.mark.parametrize(("key", "value"), [
    ("alias.co", "checkout"),  # a git command under another name
    ("alias.x", None), ("core.pager", None),  # the value from the environment
    ("include.path", "/tmp/x"), ("core.hooksPath", "/tmp/h"), ("protocol.ext.allow",
                                                               "always"),
    ("unknown.key", "x"),
])
def test_a_key_git_may_run_or_initd_does_not_know_is_unknown(key: str,
                                                             value: str | None) -> None:
    with pytest.raises(Unknown):
        gitcode.config(key, value)


def test_a_git_line_gives_the_code_of_its_options() -> None:
    assert gitcode.strings("ls", w("-c", "core.pager=rm")) == ([], [])  # not git
    found = gitcode.strings("git", w("-c", "core.pager=rm -rf x", "-p", "log"))
    assert found.strings == ["rm -rf x"]
    assert found.commands == [w("git", "log")]  # also without git's own options
    assert gitcode.strings("git", w("--config-env=user.name=NAME", "log")).strings == []
    found = gitcode.strings("git", w("rebase", "-x", "rm x", "main"))
    assert found.strings == ["rm x"] and found.commands == []
    assert gitcode.strings("git", w("rebase", "--exec=make", "main")).strings == ["make"]
    assert gitcode.strings("git", w("push", "--receive-pack", "rm x")).strings == ["rm x"]
    assert gitcode.strings("git", w("-C", "/w", "log")).commands == [w("git", "log")]


def test_commands_git_runs_as_words_and_pushes_by_other_names() -> None:
    assert gitcode.strings("git", w("bisect", "run", "rm", "-rf", "x")).commands == [
        w("rm", "-rf", "x")]
    assert gitcode.strings("git", w("submodule", "foreach", "--recursive", "rm x")
                           ).strings == ["rm x"]  # one word: sh -c
    assert gitcode.strings("git", w("send-pack", "--force", "d", "main")).commands == [
        w("git", "push", "--force", "d", "main")]


def test_git_config_sets_what_a_dash_c_would() -> None:
    assert gitcode.strings("git", w("config", "alias.x", "!rm x")).strings == ["rm x"]
    assert gitcode.strings("git", w("config", "set", "core.pager", "rm")).strings == ["rm"]
    assert gitcode.strings("git", w("config", "--global", "core.pager", "less")
                           ).strings == ["less"]
    assert gitcode.strings("git", w("config", "--get", "core.pager")).strings == []
    assert gitcode.strings("git", w("config", "--unset", "alias.x")).strings == []


@pytest.mark.parametrize("args", [
    w(None, "log"), w("-c", None, "log"), w("--exec-path=/tmp", "log"), w("-C", ".", None),
    w("rebase", "-x", None), w("rebase", None), w("config", "--rename-section", "a", "alias"),
    w("config", None, "x"), w("bisect", None),
])
def test_what_git_runs_known_only_when_it_runs_is_unknown(
        args: tuple[tuple[str | None, ...], ...]) -> None:
    with pytest.raises(Unknown):
        gitcode.strings("git", args)
