"""The texts a Bash permission rule is tested on for one command: each simple command
(shellwords.py), and the command each wrapper in front of it runs.

Claude Code strips ``timeout``, ``time``, ``nice``, ``nohup``, ``stdbuf``, ``command``,
``builtin``, ``noglob`` and bare ``xargs`` before matching; initd strips those (with
their options, as getopt reads them) and the others in programs.WRAPPERS, reads the
code ``watch`` and ``flock -c`` give a shell, follows ``find -exec``, and also tries a
command's program without its directory (``/bin/rm`` is tested as ``rm`` too, and git's
dashed ``…/git-push`` as ``git push``). A guard only runs more often for it.

None (the rule matches: fail closed) when what runs is known only when the shell runs it:
a program name it computes (``$CMD``, ``$(…)``, a glob), code in a string or on standard
input (``eval``, ``sh -c``, ``… | bash``, ``env -S``, ``alias x=…``, ``trap``), a line
that can change what a name runs (rebinding.py: ``hash -p``, ``BASH_CMDS[x]=``,
``source``, ``PATH=…``), or more than WRAP_LIMIT wrappers. Code in a string that git
runs (gitcode.py: ``git -c core.pager=…``, ``GIT_PAGER=…``) is read as the shell reads
it, and its commands are tested too, to CODE_LIMIT strings deep. A script a command runs
(``bash build.sh``) is not read: its name is matched, as Claude Code matches it.
"""

from __future__ import annotations

import functools

from initd.events.claude import gitcode, programs, rebinding, shellwords
from initd.events.claude.wildcards import HOLE, Segment
from initd.events.claude.words import Bound, Unknown, Word, literal, prefix

WRAP_LIMIT = 16  # wrappers in front of one command
CODE_LIMIT = 8  # strings of code inside strings of code
Words = tuple[Word, ...]
ASSIGNING = ("env", "sudo", "!", "time", "coproc")  # VAR=value words before the command
FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}


@functools.lru_cache(maxsize=64)
def candidates(command: str, nested: int = 0) -> tuple[tuple[Segment, ...], ...] | None:
    """Every text of every simple command of ``command``, and of the code in strings it
    gives git (``nested`` strings deep already); None: the rule matches."""
    found = shellwords.read(command)
    if found is None or nested > CODE_LIMIT:
        return None
    bound = list(found.bound)  # and what builtins set, as texts() finds them
    try:
        every = [text for words in found.commands for text in texts(words, 0, nested, bound)]
        for name, value in found.bound:
            every += _strings([rebinding.binding(name, value)], nested)
        if rebinding.tainted(bound, found.evaluated):
            return None
        return tuple(tuple(text) for text in every)
    except Unknown:
        return None


def texts(words: Words, depth: int = 0, nested: int = 0,
          bound: list[Bound] | None = None) -> list[list[Segment]]:
    """The command, then what each wrapper in front of it runs (Unknown: not known);
    what its builtins set is added to ``bound``."""
    found: list[list[Segment]] = []
    bound = [] if bound is None else bound
    for _ in range(WRAP_LIMIT if depth < WRAP_LIMIT else 0):
        if not words:
            return found
        name, base = _name(words[0])
        found += [_text(((head,), *words[1:])) for head in (name, base) if head is not None]
        program = base or name or ""
        if program in shellwords.RESERVED:
            raise Unknown  # `! ! case …`: a compound command the grammar read as words
        if program.startswith("git-") and program[4:]:  # git's own, by its dashed name:
            words = (("git",), (program[4:],), *words[1:])  # /usr/lib/git-core/git-push
            continue
        _code(program, words[1:])
        found += _strings(programs.shell_string(program, words[1:]), nested)
        code = gitcode.strings(program, words[1:])
        sets = rebinding.check(program, words[1:])
        bound += sets
        found += _strings([*(rebinding.binding(*pair) for pair in sets), *code.strings],
                          nested)
        runs = code.commands + (_find_exec(words[1:]) if program == "find" else [])
        for inner in runs:  # find -exec CMD ;, git bisect run CMD
            found += texts(inner, depth + 1, nested, bound)
        names = _argv0(words[1:]) if program == "exec" else []
        words, assigned = _unwrap(program, words[1:])
        # exec -a NAME PROGRAM: a program that reads its name (busybox) runs as NAME
        found += [_text((name, *words[1:])) for name in names if words]
        for word in assigned:
            found += _strings([rebinding.binding(*rebinding.assignment(word))], nested)
    raise Unknown


def _strings(codes: list[str | None], nested: int) -> list[list[Segment]]:
    """The texts of code in strings, read as ``CODE "$@"`` (git runs it so when it
    passes arguments) and tested also without the arguments (when it passes none)."""
    found: list[list[Segment]] = []
    for code in codes:
        inner = None if code is None else candidates(f'{code} "$@"', nested + 1)
        if code is not None and inner is None:
            raise Unknown
        for text in inner or ():
            found.append(list(text))
            if text[-4:] == (" ", "", HOLE, ""):  # the "$@" git adds
                found.append(list(text[:-4]))
    return found


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
    if program in programs.ALWAYS_CODE:
        raise Unknown
    if program not in programs.SHELLS:
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
    ``bash <<EOF``, ``bash $F``); a named script file is not read."""
    text = None if word is None else literal(word)
    if text is None or text == "-" or text.startswith(("/dev/", "/proc/")):
        raise Unknown


def _unwrap(program: str, args: Words) -> tuple[Words, Words]:
    """What the wrapper ``program`` runs, after its options and operands, and the
    assignments it makes for it; () if it is not a wrapper (or runs nothing:
    ``command -v rm``)."""
    spec = programs.WRAPPERS.get(program)
    if spec is None:
        return (), ()
    operands = spec[2]
    at = programs.past_options(program, args, 0)
    if at < 0:
        return (), ()  # a query: runs nothing
    while program == "time" and at < len(args) and literal(args[at]) == "!":
        at += 1  # `time ! rm`: bash's keyword times a pipeline, negated or not
    # env's and sudo's assignments; and a command's own after the keywords !, time and
    # coproc, where the grammar took the keyword for a program (`! ! X=1 rm`)
    start = at
    while program in ASSIGNING and at < len(args) and _assignment(args[at], program):
        at += 1
    runs = args[at + operands:]
    if program == "setarch" and at < len(args):  # setarch ARCH [options] PROGRAM
        runs = runs[max(0, programs.past_options(program, runs, 0)):]
    if not runs and program in programs.SHELL_IF_NONE:
        raise Unknown  # `… | unshare -r`: a shell, reading its standard input
    return runs, args[start:at]


def _assignment(word: Word, program: str) -> bool:
    """Whether ``word`` is an assignment: any word with ``=`` for env and sudo (``env
    'BASH_FUNC_ls%%=() { …; }'`` too), a variable's name then ``=`` for bash."""
    name, equals, _ = prefix(word).partition("=")
    if equals and (name.isidentifier() or program in ("env", "sudo")):
        return True
    if literal(word) is None:
        raise Unknown  # env $X rm: an assignment, an option or the command
    return False


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


def _argv0(args: Words) -> list[Word]:
    """``exec -a NAME``'s NAME (bash's exec takes -c, -l and -a NAME)."""
    found = []
    at = 0
    while at < len(args) and str(literal(args[at])).startswith("-"):
        if literal(args[at]) == "-a" and at + 1 < len(args):
            found.append(args[at + 1])
            at += 1
        at += 1
    return found
