"""The texts a Bash permission rule is tested on for one command: each simple command
(shellwords.py), and the command each wrapper in front of it runs.

Claude Code strips ``timeout``, ``time``, ``nice``, ``nohup``, ``stdbuf``, ``command``,
``builtin``, ``noglob`` and bare ``xargs`` before matching; initd strips those (with
their options, as getopt reads them) and the others in WRAPPERS, follows
``find -exec``, and also tries a command's program without its directory
(``/bin/rm`` is tested as ``rm`` too). A guard only runs more often for it.

None (the rule matches: fail closed) when what runs is known only when the shell runs it:
a program name it computes (``$CMD``, ``$(…)``, a glob), code in a string or on standard
input (``eval``, ``sh -c``, ``… | bash``, ``env -S``, ``alias x=…``, ``trap``), or
more than WRAP_LIMIT wrappers. A script a command runs (``bash build.sh``) is not read:
its name is matched, as Claude Code matches it.
"""

from __future__ import annotations

import functools

from initd.events.claude import shellwords
from initd.events.claude.wildcards import HOLE, Segment
from initd.events.claude.words import Word, literal

WRAP_LIMIT = 16  # wrappers in front of one command
Words = tuple[Word, ...]
# program: (short options taking a value, long options taking a value, operands before
# the command). Every one stops at its first operand (getopt's "+").
WRAPPERS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "builtin": ("", (), 0), "command": ("", (), 0), "noglob": ("", (), 0),
    "nohup": ("", (), 0), "coproc": ("", (), 0), "busybox": ("", (), 0),
    "unbuffer": ("", (), 0), "setsid": ("", (), 0), "exec": ("a", (), 0),
    "!": ("", (), 0),  # `! ! rm`: the grammar reads the second ! as a program
    "time": ("fo", ("--format", "--output"), 0),
    "timeout": ("ks", ("--kill-after", "--signal"), 1),
    "nice": ("n", ("--adjustment",), 0),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0),
    "env": ("uCS", ("--unset", "--chdir", "--split-string"), 0),
    "xargs": ("adEILnPs", ("--arg-file", "--delimiter", "--max-lines", "--max-args",
                          "--max-procs", "--max-chars", "--process-slot-var"), 0),
    "sudo": ("CDghpRrTtUu", ("--close-from", "--chdir", "--group", "--host", "--prompt",
                             "--chroot", "--role", "--command-timeout", "--type",
                             "--other-user", "--user"), 0),
    "doas": ("Cu", (), 0),
    "ionice": ("cnpPu", ("--class", "--classdata", "--pid", "--pgid", "--uid"), 0),
    "watch": ("n", ("--interval",), 0),
    "flock": ("Ew", ("--conflict-exit-code", "--timeout", "--wait"), 1),
    "chrt": ("", (), 1), "taskset": ("", (), 1),
    "chroot": ("", ("--userspec", "--groups"), 1),
    "strace": ("abeEIoOpPsSuX", ("--output",), 0),
}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash"}
ALWAYS_CODE = {"eval", "su", "runuser", "script", "parallel"}  # a string, or a shell
FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}


class Unknown(Exception):
    """What runs is known only when the shell runs it."""


@functools.lru_cache(maxsize=64)
def candidates(command: str) -> tuple[tuple[Segment, ...], ...] | None:
    """Every text of every simple command of ``command``; None: the rule matches."""
    found = shellwords.simple_commands(command)
    if found is None:
        return None
    try:
        return tuple(tuple(text) for words in found for text in texts(words))
    except Unknown:
        return None


def texts(words: Words, depth: int = 0) -> list[list[Segment]]:
    """The command, then what each wrapper in front of it runs (Unknown: not known)."""
    found: list[list[Segment]] = []
    for _ in range(WRAP_LIMIT if depth < WRAP_LIMIT else 0):
        if not words:
            return found
        name, base = _name(words[0])
        found += [_text(((head,), *words[1:])) for head in (name, base) if head is not None]
        program = base or name or ""
        if program in shellwords.RESERVED:
            raise Unknown  # `! ! case …`: a compound command the grammar read as words
        _code(program, words[1:])
        if program == "find":
            for inner in _find_exec(words[1:]):
                found += texts(inner, depth + 1)
        words = _unwrap(program, words[1:])
    raise Unknown


def _name(word: Word) -> tuple[str | None, str | None]:
    """The program as written, and without its directory, each None when not known
    (a quoted "$HOME"/bin/rm is an ``rm``; $CMD and an unquoted $X/rm are anything)."""
    if HOLE not in word:
        full = "".join(s for s in word if s is not None)
        return full, full.rsplit("/", 1)[1] or None if "/" in full else None
    tail = "".join(s for s in word[len(word) - word[::-1].index(HOLE):] if s is not None)
    if "/" not in tail or not tail.rsplit("/", 1)[1]:
        raise Unknown
    return None, tail.rsplit("/", 1)[1]


def _code(program: str, args: Words) -> None:
    """Unknown for a program that runs shell code from a string or its standard input."""
    if program in ALWAYS_CODE or (program == "trap" and len(args) > 1):
        raise Unknown
    if program == "alias" and any(literal(w) is None or "=" in str(literal(w))
                                  for w in args):
        raise Unknown  # alias x='rm -rf': code, run where x is written
    if program in ("source", "."):
        _script(args[0] if args else None)
    if program not in SHELLS:
        return
    at = 0
    while at < len(args):
        word = literal(args[at])
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            at += 2
            continue
        if word is None or word == "-" or not word.startswith(("-", "+")):
            break
        if word == "--":
            at += 1
            break
        if not word.startswith("--") and ("c" in word or "s" in word):
            raise Unknown  # bash -c CODE, bash -s: standard input
        at += 1
    _script(args[at] if at < len(args) else None)


def _script(word: Word | None) -> None:
    """Unknown for a script that is standard input or computed (``… | bash``,
    ``bash <<EOF``, ``source <(…)``, ``bash $F``); a named script file is not read."""
    text = None if word is None else literal(word)
    if text is None or text == "-" or text.startswith(("/dev/", "/proc/")):
        raise Unknown


def _unwrap(program: str, args: Words) -> Words:
    """What the wrapper ``program`` runs, after its options and operands; () if it is
    not a wrapper (or runs nothing: ``command -v rm``)."""
    spec = WRAPPERS.get(program)
    if spec is None:
        return ()
    short, long, operands = spec
    at = 0
    while at < len(args):
        word = literal(args[at])
        if word is None:
            raise Unknown  # an option or the command, known only when it runs
        if word == "--":
            at += 1
            break
        if not word.startswith("-") or (word == "-" and program != "env"):
            break
        if program == "command" and word in ("-v", "-V"):
            return ()  # a query: runs nothing
        if program == "env" and _splits(word):
            raise Unknown  # env -S 'rm -rf x': a string split into a command
        at += 1 + _takes_value(word, short, long)
    while program == "time" and at < len(args) and literal(args[at]) == "!":
        at += 1  # `time ! rm`: bash's keyword times a pipeline, negated or not
    # env's assignments; and a command's own after the keywords !, time and coproc, where
    # the grammar took the keyword for a program (`! ! X=1 rm`, `coproc X=1 rm`)
    while program in ("env", "!", "time", "coproc") and at < len(args) and \
            _assignment(args[at]):
        at += 1
    return args[at + operands:]


def _splits(option: str) -> bool:
    """env's -S (--split-string, or any prefix of it getopt_long takes)."""
    if option.startswith("--"):
        name = option.partition("=")[0]
        return len(name) > 2 and "--split-string".startswith(name)
    return "S" in option[1:]


def _takes_value(word: str, short: str, long: tuple[str, ...]) -> int:
    """1 when the option ``word`` takes the next word as its value (``-k 5``,
    ``--signal KILL``, getopt_long's unique prefix ``--sig KILL``), else 0."""
    if word.startswith("--"):
        return int("=" not in word and any(opt.startswith(word) for opt in long))
    for at, char in enumerate(word[1:], 1):
        if char in short:
            return int(at == len(word) - 1)  # -kKILL carries its value
    return 0


def _assignment(word: Word) -> bool:
    text = literal(word)
    if text is None:
        raise Unknown  # env $X rm: an assignment, an option or the command
    name, equals, _ = text.partition("=")
    return bool(equals) and name.isidentifier()


def _find_exec(args: Words) -> list[Words]:
    """The commands ``find … -exec CMD … ;`` (or ``+``) runs."""
    found = []
    for at, word in enumerate(args):
        if literal(word) in FIND_EXEC:
            end = next((i for i in range(at + 1, len(args))
                        if literal(args[i]) in (";", "+")), len(args))
            found.append(args[at + 1:end])
    return found


def _text(words: Words) -> list[Segment]:
    text: list[Segment] = []
    for at, word in enumerate(words):
        text += [" ", *word] if at else list(word)
    return text
