"""Where a placeholder stands in a shell command, as sh reads it: outside quotes, inside
single or double quotes, in a comment, in a here-document's body (templates.shell puts
a value there only as a quoted reference, never as text sh would parse)."""

from __future__ import annotations

# The states quote_states gives a position, besides "" (unquoted), "'" and '"'.
COMMENT = "#"  # after an unquoted # that starts a word, to the end of the line
HEREDOC = "<<"  # a here-document's body: expanded, but its quotes are plain text
LITERAL = "<<'"  # a here-document's body whose delimiter was quoted: nothing expanded
_WORD_END = " \t\n;&|()<>"


class _Frame:
    """One level of nesting: the top, a ``$(…)``/backquoted command, or a here-document's
    body (where quotes are plain text, but ``$(…)`` and backquotes still run)."""

    def __init__(self, opener: str = "", heredoc: bool = False) -> None:
        self.opener = opener  # "" | "$(" | "`"
        self.heredoc = heredoc
        self.quote = ""  # "" | "'" | '"'
        self.parens = 0  # "(" opened inside it, not yet closed


def quote_states(command: str, heredoc: bool = False) -> list[str]:
    """For each position: "" outside quotes, "'" inside single, '"' inside double quotes,
    COMMENT in a comment, HEREDOC or LITERAL in a here-document's body, as sh reads it: a
    ``$(…)`` or a backquoted command starts afresh, unquoted, even inside double quotes;
    a quote inside a comment or a here-document opens nothing (a comment such as ``# it's``
    once made every later placeholder look quoted)."""
    states: list[str] = []
    frames = [_Frame(heredoc=heredoc)]
    pending: list[tuple[str, bool, bool]] = []  # here-documents opened on this line
    escaped = False
    at = 0
    while at < len(command):
        char, frame = command[at], frames[-1]
        plain = not frame.quote and not escaped
        if plain and not frame.heredoc and char == "#" and (
                at == 0 or command[at - 1] in _WORD_END):
            end = command.find("\n", at)
            end = len(command) if end < 0 else end
            states += [COMMENT] * (end - at)
            at = end
            continue
        if plain and not frame.heredoc and command.startswith("<<<", at):
            states += [""] * 3  # a here-string (bash's): its word is read as any word is
            at += 3
            continue
        if plain and not frame.heredoc and command.startswith("<<", at):
            opened = _heredoc_operator(command, at + 2)
            if opened is not None:
                end, delimiter, strip, quoted = opened
                pending.append((delimiter, strip, quoted))
                states += [""] * (end - at)
                at = end
                continue
        if plain and char == "\n" and pending:
            states.append(frame.quote)
            at += 1
            for delimiter, strip, quoted in pending:
                at = _heredoc_body(command, at, delimiter, strip, quoted, states)
            pending = []
            continue
        states.append(HEREDOC if frame.heredoc and not frame.quote else frame.quote)
        at, escaped = _step(command, at, frames, states, escaped)
    return states


def _step(command: str, at: int, frames: list[_Frame], states: list[str],
          escaped: bool) -> tuple[int, bool]:
    """Past one character (not a comment's, not a here-document operator's): quotes
    opened and closed, ``$(`` and backquotes entered and left. Returns the next position
    and whether the character there is escaped."""
    char, frame = command[at], frames[-1]
    if escaped:
        return at + 1, False
    if frame.quote == "'":
        if char == "'":
            frame.quote = ""
    elif char == "\\":
        return at + 1, True
    elif char == "$" and command[at + 1 : at + 2] == "(":
        states.append(states[-1])  # the "(" itself
        frames.append(_Frame("$("))
        return at + 2, False
    elif char == "`":
        if frame.opener == "`" and not frame.quote:
            frames.pop()
        else:
            frames.append(_Frame("`"))
    elif frame.quote == '"':
        if char == '"':
            frame.quote = ""
    elif frame.heredoc:
        pass  # quotes and parentheses are plain text in a here-document's body
    elif char in "'\"":
        frame.quote = char
    elif char == "(":
        frame.parens += 1
    elif char == ")":
        if frame.parens:
            frame.parens -= 1
        elif frame.opener == "$(" and len(frames) > 1:
            frames.pop()
    return at + 1, False


def _heredoc_operator(command: str, at: int) -> tuple[int, str, bool, bool] | None:
    """After ``<<``: (where the delimiter word ends, the delimiter, ``<<-``, quoted)."""
    strip = command.startswith("-", at)
    at += strip
    while at < len(command) and command[at] in " \t":
        at += 1
    word: list[str] = []
    quoted = False
    while at < len(command) and command[at] not in _WORD_END:
        char = command[at]
        if char in "'\"":
            quoted = True
            close = command.find(char, at + 1)
            close = len(command) if close < 0 else close  # (never closed: to the end)
            word.append(command[at + 1 : close])
            at = min(close + 1, len(command))
        elif char == "\\":
            quoted = True
            word.append(command[at + 1 : at + 2])
            at = min(at + 2, len(command))
        else:
            word.append(char)
            at += 1
    delimiter = "".join(word)
    return (at, delimiter, strip, quoted) if delimiter else None


def _heredoc_body(command: str, at: int, delimiter: str, strip: bool, quoted: bool,
                  states: list[str]) -> int:
    """The states of a here-document's body from ``at`` through its delimiter line; where
    the command goes on after it."""
    body_start = at
    while at < len(command):
        end = command.find("\n", at)
        end = len(command) if end < 0 else end
        line = command[at:end]
        if (line.lstrip("\t") if strip else line) == delimiter:
            break
        at = min(end + 1, len(command))
    body = command[body_start:at]
    states += [LITERAL] * len(body) if quoted else quote_states(body, heredoc=True)
    end = command.find("\n", at)
    end = len(command) if end < 0 else end + 1
    states += [""] * (end - at)  # the delimiter line
    return end
