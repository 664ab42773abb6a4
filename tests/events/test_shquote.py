"""Where a placeholder stands in a shell command (initd/events/shquote.py), as sh reads it.
templates.shell puts a value there only as a quoted reference, so a state wrong here is
text of the agent's that sh parses (invariant 4). Each row is checked twice: against
quote_states, and against the shell itself (``$M`` put where the ``@`` is: expanded and
split, expanded whole, left as written, or not there at all)."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from initd.events.shquote import COMMENT, HEREDOC, LITERAL, quote_states

UNQUOTED, SINGLE, DOUBLE = "", "'", '"'
ROWS = [
    ("echo @", UNQUOTED),
    ("echo '@'", SINGLE),
    ('echo "@"', DOUBLE),
    ("echo 'a'@'b'", UNQUOTED),
    ('echo "it\'s" @', UNQUOTED),  # a single quote inside double quotes opens nothing
    ("echo \"$(echo '@')\"", SINGLE),  # $( ) starts afresh inside double quotes
    ('echo "$(echo @)"', UNQUOTED),
    ('echo "`echo @`"', UNQUOTED),
    ("echo \\'@", UNQUOTED),  # an escaped quote is no quote
    ('echo "\\"@"', DOUBLE),
    ("echo $(echo \")\" @)", UNQUOTED),  # a ) in quotes does not end the $(
    ("echo $( (echo @) )", UNQUOTED),
    ("echo x # it's @", COMMENT),  # once: every later placeholder looked quoted
    ("echo x # it's\necho @", UNQUOTED),
    ("echo a#@", UNQUOTED),  # a # inside a word starts no comment
    ("cat <<EOF\n@ it's\nEOF\necho x", HEREDOC),
    ("cat <<'EOF'\n@\nEOF", LITERAL),
    ('cat <<"EOF"\n@\nEOF', LITERAL),
    ("cat <<\\EOF\n@\nEOF", LITERAL),
    ("cat <<-EOF\n\t@\n\tEOF", HEREDOC),
    ("cat <<EOF\n$(echo '@')\nEOF", SINGLE),  # $( ) still runs in a here-document
    ("cat <<EOF\nx\nEOF\necho @", UNQUOTED),  # after the delimiter line
    ("cat <<A <<'B'\n$M\nA\n@\nB", LITERAL),  # two on one line, in order
]
# bash's here-string is no here-document: its word is a word, and the next line a command
# (read as a here-document's body, a value put there bare ran as a command in bash)
BASH_ROWS = [
    ("cat <<<'@'", SINGLE),
    ('cat <<<"@"', DOUBLE),
    ("cat <<<x\necho @\nx", UNQUOTED),
]
OUTPUT = {UNQUOTED: "expanded and split", DOUBLE: "expanded whole",
          HEREDOC: "expanded whole", SINGLE: "as written", LITERAL: "as written",
          COMMENT: "not there"}


@pytest.mark.parametrize(("command", "state"), ROWS + BASH_ROWS)
def test_a_placeholders_state(command: str, state: str) -> None:
    at = command.rindex("@")
    assert quote_states(command)[at] == state


@pytest.mark.parametrize(("command", "state", "shell"), [
    *((command, state, "sh") for command, state in ROWS),
    *((command, state, "bash") for command, state in ROWS + BASH_ROWS)])
def test_the_shell_reads_it_so(command: str, state: str, shell: str) -> None:
    at = command.rindex("@")
    script = command[:at] + "$M" + command[at + 1:]
    out = subprocess.run([shell, "-c", script], capture_output=True, text=True, timeout=60,
                         env={"M": "a  b", "PATH": "/usr/bin:/bin"}).stdout
    seen = ("expanded whole" if "a  b" in out else "expanded and split" if "a b" in out
            else "as written" if "$M" in out else "not there")
    assert seen == OUTPUT[state], out


def test_each_position_has_a_state() -> None:
    command = "a 'b' \"c\" # d\ncat <<E\ne\nE\n"
    states = quote_states(command)
    assert len(states) == len(command)
    assert states[command.index("b")] == SINGLE and states[command.index("c")] == DOUBLE
    assert states[command.index("d")] == COMMENT and states[command.index("e")] == HEREDOC


@given(st.text(alphabet=st.sampled_from(list("ab #'\"\\$()`<-\n\tE;|&")), max_size=80))
@example("cat <<")  # an operator with no delimiter
@example("cat <<'E")  # a delimiter's quote never closed
@example("echo $(")  # never closed
@example("echo '")
@example("cat <<E\nno end")
@example("cat <<E\\")  # a backslash last
def test_any_command_gets_one_known_state_per_character(command: str) -> None:
    """Total on what the agent writes: never an exception, one state per character."""
    states = quote_states(command)
    assert len(states) == len(command)
    assert set(states) <= {UNQUOTED, SINGLE, DOUBLE, COMMENT, HEREDOC, LITERAL}
