"""Placeholders: in a real `sh -c`, no value runs anything, whatever its quotes around it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from initd.events import templates
from initd.events.templates import MISSING

HOSTILE = ["plain", "two words", "it's", 'say "hi"', "line\nbreak", "$(touch CANARY)",
           "`touch CANARY`", "a; touch CANARY", "a && touch CANARY", "$HOME", "*",
           "back\\slash", "'$(touch CANARY)'", '"; touch CANARY; "', "-n", ""]


def lookup_from(values: dict[str, Any]) -> templates.Lookup:
    def lookup(kind: str, name: str) -> Any:
        return values.get(name, MISSING)
    return lookup


def sh(command: str, values: dict[str, Any], cwd: Path) -> str:
    rendered, env, unknown = templates.shell(command, lookup_from(values))
    assert unknown == []
    out = subprocess.run(["sh", "-c", rendered], capture_output=True, text=True, cwd=cwd,
                         env={**os.environ, **env}, timeout=10)
    assert out.returncode == 0, out.stderr
    return out.stdout


# every form of placeholder, in every quoting context a command can put it in
EXACT = ["printf %s {{x}}", "printf %s '{{x}}'", 'printf %s "{{x}}"', "printf %s ${X}",
         "printf %s '${X}'", 'printf %s "${X}"', "printf %s {file}", "printf %s '{file}'",
         'printf %s "{file}"', 'printf %s "pre-{{x}}-post"', "printf %s 'pre-{{x}}-post'",
         'printf %s "$(printf %s {{x}})"', "printf %s \"$(printf %s '{{x}}')\""]
# (`eval {{x}}` or `sh -c {{x}}` ask the shell to run the value: no quoting can stop
# that, and none is attempted; docs/events.md says so)
RUNS_NOTHING = ["printf %s $(printf %s {{x}})", "printf %s `printf %s {{x}}`",
                'printf %s "`printf %s {{x}}`"', "printf %s \\{{x}}", "{{x}}",
                "echo {{x}} | cat", "x={{x}}; printf %s \"$x\"", "printf %s $(( 1 )){{x}}",
                "case {{x}} in *) printf %s {{x}};; esac"]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("command", EXACT)
def test_a_value_arrives_exactly_and_runs_nothing(command: str, value: str,
                                                  tmp_path: Path) -> None:
    expected = value if not command.startswith("printf %s \"pre") and "pre-" not in command \
        else f"pre-{value}-post"
    assert sh(command, {"x": value, "X": value, "file": value}, tmp_path) == expected
    assert not list(tmp_path.iterdir())  # no CANARY


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("command", RUNS_NOTHING)
def test_in_odd_contexts_a_value_may_split_but_never_runs(command: str, value: str,
                                                          tmp_path: Path) -> None:
    rendered, env, _ = templates.shell(command, lookup_from({"x": value}))
    subprocess.run(["sh", "-c", rendered], capture_output=True, cwd=tmp_path,
                   env={**os.environ, **env}, timeout=10)
    assert not (tmp_path / "CANARY").exists(), (command, value)


def test_the_command_text_never_holds_a_value() -> None:
    rendered, env, _ = templates.shell("run {{x}} '{{x}}' \"{{x}}\"",
                                       lookup_from({"x": "$(evil)"}))
    assert "evil" not in rendered
    assert rendered == 'run "${INITD_V_1}" \'\'"${INITD_V_2}"\'\' "${INITD_V_3}"'
    assert env == {"INITD_V_1": "$(evil)", "INITD_V_2": "$(evil)", "INITD_V_3": "$(evil)"}


def test_unknown_placeholders_stay_as_written() -> None:
    rendered, env, unknown = templates.shell("echo {{nope}} ${NOPE} {file} {other}",
                                             lookup_from({}))
    assert rendered == "echo {{nope}} ${NOPE} {file} {other}"
    assert (env, unknown) == ({}, ["{{nope}}", "${NOPE}", "{file}"])


@pytest.mark.parametrize(("value", "as_text"), [
    (3, "3"), (2.5, "2.5"), (True, "true"), (None, ""), (["a.ts", "b.ts"], "a.ts b.ts"),
    ({"k": 1}, '{"k":1}')])
def test_values_as_text(value: Any, as_text: str) -> None:
    assert templates.text(value) == as_text


def test_a_url_takes_a_leading_placeholder_whole_and_encodes_the_rest() -> None:
    values = {"SLACK_WEBHOOK": "https://hooks.slack.example/T/B/x",
              "CALLBACK_URL": "http://127.0.0.1:8765/callback/tok",
              "ERROR": "x/../../admin?y=1#z@evil.example"}
    done, _ = templates.url("${SLACK_WEBHOOK}", lookup_from(values))
    assert done == values["SLACK_WEBHOOK"]
    done, _ = templates.url("${CALLBACK_URL}?action=approve", lookup_from(values))
    assert done == "http://127.0.0.1:8765/callback/tok?action=approve"
    done, _ = templates.url("https://example.com/report/${ERROR}", lookup_from(values))
    assert done == "https://example.com/report/x%2F..%2F..%2Fadmin%3Fy%3D1%23z%40evil.example"


def test_a_body_keeps_its_shape_and_json_escapes_values() -> None:
    import json

    body = {"text": "Pipeline ${SESSION} failed: ${ERROR}",
            "actions": [{"label": "Approve", "callback": "${CALLBACK_URL}?action=approve"}],
            "n": 3}
    values = {"SESSION": "s1", "ERROR": 'quote " and } brace', "CALLBACK_URL": "http://cb"}
    done, unknown = templates.data(body, lookup_from(values))
    assert unknown == []
    assert json.loads(json.dumps(done)) == {
        "text": 'Pipeline s1 failed: quote " and } brace',
        "actions": [{"label": "Approve", "callback": "http://cb?action=approve"}], "n": 3}


# Comments and here-documents: a quote there opens nothing, so it must not change how a
# later placeholder is quoted; inside an expanding here-document the value arrives as is.
AFTER_ODD_TEXT = [
    "# it's a comment\nprintf %s {{x}}",
    "# say \"hi\nprintf %s {{x}}",
    "true # it's\nprintf %s \"{{x}}\"",
    "cat <<EOF >/dev/null\nit's \"odd\nEOF\nprintf %s {{x}}",
    "cat <<-'EOF' >/dev/null\n\tit's\n\tEOF\nprintf %s '{{x}}'",
    "cat <<\"EOF\" >/dev/null; printf %s {{x}}\nsay \"hi\nEOF",
    "cat <<EOF\n{{x}}\nEOF",
    "cat <<EOF\n\"{{x}}\"\nEOF",
    "cat <<EOF\n'{{x}}'\nEOF",
    "cat <<EOF\n$(printf %s \"{{x}}\")\nEOF",
    "cat <<A <<B\nit's\nA\n{{x}}\nB",
]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("command", AFTER_ODD_TEXT)
def test_comments_and_here_documents_keep_the_quoting_right(command: str, value: str,
                                                            tmp_path: Path) -> None:
    got = sh(command, {"x": value}, tmp_path)
    assert not list(tmp_path.iterdir())  # no CANARY
    if "<<EOF\n" in command or "<<A" in command:  # cat adds the line's quotes and newline
        quotes = command.split("\n")[1].replace("{{x}}", "")[:1]
        if "$(" in command or "<<A" in command:  # (cat reads the last here-document)
            quotes = ""
        assert got == f"{quotes}{value}{quotes}\n"
    else:
        assert got == value


def test_a_comment_holds_a_harmless_reference() -> None:
    rendered, _, _ = templates.shell("true # {{x}}", lookup_from({"x": "$(evil)"}))
    assert "evil" not in rendered


def test_a_placeholder_in_a_quoted_here_document_is_refused() -> None:
    with pytest.raises(templates.TemplateError, match="quoted delimiter"):
        templates.shell("cat <<'EOF'\n{{x}}\nEOF", lookup_from({"x": "v"}))
