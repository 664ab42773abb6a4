"""Whether a command line can change, while it runs, what a name in it runs.

bash finds what a command name runs in a closed set of shell state (``man bash``, 5.2,
COMMAND EXECUTION and ALIASES): its aliases, its functions, its enabled builtins, its
hash table, and the variables it looks names up with (LOOKUP). Only the shell itself
changes that state: a builtin running in it, an assignment, a function definition. A
program it starts cannot. So a line whose builtins are all inert for names (BUILTINS,
with SET and SHOPT for their options) and which assigns none of LOOKUP, in any of the
shell's ways, runs what its words name; a function it defines is read with it, and a
call through ``"$@"`` is a name known only when it runs. Anything else (``hash -p``,
``BASH_CMDS[x]=``, ``enable``, ``source``, a nameref, ``set -o posix``…) raises
Unknown: the rule matches and the hook runs. Writing PATH is such a rebinding too
(``export PATH="$HOME/bin:$PATH"`` runs the hook), as is a variable bash runs as code
(PS4 with ``set -x``, PROMPT_COMMAND).

A variable another program runs as a command (``GIT_PAGER``, ``EDITOR``…) is code in a
string: gitcode.py reads it. Arithmetic can only assign numbers: a name bound to a number
is a relative file name, which a line can run by its own name anyway.

bash also runs code from a value it evaluates as an expression: ``X='a[$(rm …)]'; echo
$((X))`` runs rm (ARITHMETIC EVALUATION: a variable's value "is evaluated as an
arithmetic expression when it is referenced", and a subscript's ``$(…)`` is expanded).
So a value the line sets that is known only when it runs, or holds ``$(`` or a backtick,
in a variable evaluated (tainted()), and a name given as a string with such a subscript
(``printf -v 'a[$(…)]'``, ``test -v``), make the line unknown as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from initd.events.claude import gitcode
from initd.events.claude.words import Bound, Unknown, Word, drop, literal, prefix

Words = tuple[Word, ...]
LOOKUP = frozenset({
    "PATH", "EXECIGNORE", "BASH_CMDS", "BASH_ALIASES",  # the lookup itself
    "POSIXLY_CORRECT", "BASH_COMPAT", "SHELLOPTS", "BASHOPTS",  # modes: aliases, order
    "BASH_ENV", "ENV", "BASH_LOADABLES_PATH",  # files run (or loaded) as code
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"})  # expanded, $(…) and all
# bash's own variables with the integer attribute (`declare -p` in bash 5.2): a value
# assigned to one is evaluated as arithmetic, as under `declare -i` (OPTIND='a[$(…)]'
# runs the command in the subscript)
INTEGERS = frozenset({"BASHPID", "HISTCMD", "MAILCHECK", "OPTIND", "RANDOM", "SECONDS",
                      "SRANDOM"})
# set -o: all inert for names but these (posix: aliases in a script, special builtins
# before functions; keyword: assignments anywhere; history, histexpand: !-expansion)
SET = {"allexport": "a", "braceexpand": "B", "emacs": "", "errexit": "e", "errtrace": "E",
       "functrace": "T", "hashall": "h", "ignoreeof": "", "interactive-comments": "",
       "monitor": "m", "noclobber": "C", "noexec": "n", "noglob": "f", "nolog": "",
       "notify": "b", "nounset": "u", "onecmd": "t", "physical": "P", "pipefail": "",
       "privileged": "p", "verbose": "v", "vi": "", "xtrace": "x"}
SET_BINDING = {"histexpand": "H", "history": "", "keyword": "k", "posix": ""}
# shopt: all inert for names but expand_aliases and the compat levels (which change how
# bash reads quotes in expansions); interactive_comments is always on in a script
SHOPT_BINDING = {"expand_aliases", "compat31", "compat32", "compat40", "compat41",
                 "compat42", "compat43", "compat44"}
SHOPT = {
    "autocd", "assoc_expand_once", "cdable_vars", "cdspell", "checkhash", "checkjobs",
    "checkwinsize", "cmdhist", "complete_fullquote", "direxpand", "dirspell", "dotglob",
    "execfail", "extdebug", "extglob", "extquote", "failglob", "force_fignore",
    "globasciiranges", "globskipdots", "globstar", "gnu_errfmt", "histappend", "histreedit",
    "histverify", "hostcomplete", "huponexit", "inherit_errexit", "interactive_comments",
    "lastpipe", "lithist", "localvar_inherit", "localvar_unset", "login_shell", "mailwarn",
    "no_empty_cmd_completion", "nocaseglob", "nocasematch", "noexpand_translation",
    "nullglob", "patsub_replacement", "progcomp", "progcomp_alias", "promptvars",
    "restricted_shell", "shift_verbose", "sourcepath", "varredir_close", "xpg_echo"}
INERT, UNKNOWN, WRAPPER = "inert", "unknown", "wrapper"  # or a check (below)


def check(program: str, args: Words) -> list[Bound]:
    """What the builtin ``program`` sets (Unknown when it changes what a name runs or
    runs code); [] for a program bash starts, which changes nothing of the shell's."""
    kind = BUILTINS.get(program, INERT)
    if kind == UNKNOWN:
        raise Unknown
    return [] if isinstance(kind, str) else kind(args)


def binding(name: str | None, value: Word | None) -> str | None:
    """Unknown when setting ``name`` to ``value`` changes what a name runs; the code to
    read when another program runs the value as a command; else None."""
    if name is None or name in LOOKUP or name.startswith("BASH_FUNC_"):
        raise Unknown  # (BASH_FUNC_x%%, through env: a function a bash started imports)
    return gitcode.variable(name, value)


def _options(args: Words, takes: str) -> tuple[list[tuple[str, Word]], Words]:
    """A builtin's options (each letter, with its value if it takes one) and operands,
    as bash's getopt reads them: up to ``--`` or the first word not an option."""
    found: list[tuple[str, Word]] = []
    at = 0
    while at < len(args):
        head = prefix(args[at])
        if literal(args[at]) is None and (not head or head.startswith(("-", "+"))):
            raise Unknown  # an option or not, known when it runs
        text = head
        at += 1
        if text == "--":
            break
        if len(text) < 2 or text[0] not in "-+":
            at -= 1
            break
        for pos, letter in enumerate(text[1:], 2):
            if letter not in takes:
                found.append((text[0] + letter, ("",)))
                continue
            if text[pos:]:  # -vNAME
                found.append((text[0] + letter, (text[pos:],)))
            else:  # -v NAME
                found.append((text[0] + letter, args[at] if at < len(args) else ("",)))
                at += 1
            break
    return found, args[at:]


def tainted(bound: list[Bound], evaluated: frozenset[str]) -> bool:
    """Whether bash may evaluate, as an expression, a value the line sets that can carry
    a command (``X='a[$(rm …)]'; echo $((X))``): a value known only when it runs, or one
    with ``$(`` or a backtick, in a variable evaluated (or named by one evaluated), bash's
    own integers (INTEGERS) included."""
    values: dict[str, list[Word | None]] = {}
    for name, value in bound:
        values.setdefault(str(name), []).append(value)
    if "@" in evaluated:
        return True  # $1 evaluated: set by `set --` or a caller, with any value
    todo, seen = [*evaluated, *INTEGERS], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for value in values.get(name, ()):
            text = None if value is None else literal(value)
            if text is None or "$(" in text or "`" in text:
                return True
            todo += re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    return False


def _subscript_code(word: Word) -> bool:
    """A variable's name given as a string with a subscript bash evaluates that is not a
    plain number: it may hold a command (``'a[$(rm …)]'``), name a variable whose value
    does (``'a[X]'``), or be known only when it runs (``"a[$i]"``)."""
    head = prefix(word)
    whole = literal(word)
    if whole is None and "=" not in head:
        return "[" in head
    name = (whole or head).partition("=")[0]
    index = name.partition("[")[2].rpartition("]")[0]
    return "[" in name and not (index.isdigit() or index in ("@", "*"))


def assignment(word: Word) -> Bound:
    """The variable a word names (``x``, ``a[k]``, ``x=v``), with the value it sets."""
    if _subscript_code(word):
        raise Unknown
    name, equals, _ = prefix(word).partition("=")
    if not equals and literal(word) is None:
        return None, None  # "$X": any name
    return name.rstrip("+").partition("[")[0], drop(word, len(name) + 1) if equals else None


def _declare(args: Words) -> list[Bound]:
    options, operands = _options(args, "")
    if any(letter in ("-n", "+n") for letter, _ in options):
        raise Unknown  # a nameref: every later use of the name is another variable's
    return [_declared(word) for word in operands]


def _export(args: Words) -> list[Bound]:  # export -n un-exports: not a nameref
    return [_declared(word) for word in _options(args, "")[1]]


def _declared(word: Word) -> Bound:
    """What ``declare``, ``local`` or ``export`` sets: a name with ``=``, its value; a bare
    name, no value of the line's (``local OPTIND``: unset; ``export X``: as it was)."""
    name, value = assignment(word)
    bare = value is None and name is not None and "=" not in str(literal(word))
    return (name, ("",)) if bare else (name, value)


def _read(args: Words) -> list[Bound]:
    options, operands = _options(args, "adinNptu")
    arrays = [assignment(value) for letter, value in options if letter == "-a"]
    return arrays + ([assignment(word) for word in operands] or [("REPLY", None)])


def _option_target(letter: str) -> Callable[[Words], list[Bound]]:
    def targets(args: Words) -> list[Bound]:
        options, _ = _options(args, letter)
        return [(assignment(value)[0], None) for found, value in options if found[1] == letter]
    return targets


def _mapfile(args: Words) -> list[Bound]:
    options, operands = _options(args, "dnOsuCc")
    if any(letter == "-C" for letter, _ in options):
        raise Unknown  # -C CALLBACK: code in a string, run as lines are read
    return [(assignment(operands[0])[0] if operands else "MAPFILE", None)]


def _getopts(args: Words) -> list[Bound]:
    return [(assignment(args[1])[0], None)] if len(args) > 1 else []


def _unset(args: Words) -> list[Bound]:
    options, operands = _options(args, "")
    if any(letter[1] == "n" for letter, _ in options):
        raise Unknown
    if any(letter[1] == "f" for letter, _ in options):
        return []  # a function unset: its name then runs the builtin or program it says
    return [(assignment(word)[0], ("",)) for word in operands]


def _let(args: Words) -> list[Bound]:  # (what it evaluates, shellwords.py finds)
    return [(name, ("0",)) for word in args
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", prefix(word))]


def _test(args: Words) -> list[Bound]:
    """``test -v 'a[$(rm …)]'``: the subscript is evaluated."""
    if any(literal(args[at]) == "-v" and _subscript_code(args[at + 1])
           for at in range(len(args) - 1)):
        raise Unknown
    return []


def _set(args: Words) -> list[Bound]:
    for letter, value in _options(args, "o")[0]:
        name = literal(value)
        if letter[1] == "o" and (name is None or (name and name not in SET)):
            raise Unknown
        if letter[1] in "".join(SET_BINDING.values()):
            raise Unknown
    return []


def _shopt(args: Words) -> list[Bound]:
    options, operands = _options(args, "")
    names = [literal(word) for word in operands]
    known = SET if any(letter == "-o" for letter, _ in options) else SHOPT
    if any(name is None or name not in known for name in names):
        raise Unknown
    return []


def _hash(args: Words) -> list[Bound]:
    if any(letter[1] in "pdr" for letter, _ in _options(args, "p")[0]):
        raise Unknown  # hash -p PATH NAME binds NAME; -d, -r drop bindings
    return []


def _alias(args: Words) -> list[Bound]:
    if any(literal(word) is None or "=" in str(literal(word)) for word in args):
        raise Unknown  # alias x='rm -rf': code, run where x is written
    return []


def _trap(args: Words) -> list[Bound]:
    if len(args) > 1 and literal(args[0]) not in ("-", ""):
        raise Unknown  # trap 'CODE' SIGNAL (trap - SIGNAL resets it, trap '' ignores it)
    return []


Check = str | Callable[[Words], list[Bound]]
# every builtin of bash 5.2 (`compgen -b`): inert for names, or how it changes them
BUILTINS: dict[str, Check] = {
    **dict.fromkeys(
        (":", "true", "false", "echo", "pwd", "cd", "pushd", "popd", "dirs",
         "exit", "logout", "return", "break", "continue", "shift", "kill", "jobs", "bg",
         "fg", "disown", "suspend", "times", "ulimit", "umask", "type", "help", "caller",
         "complete", "compopt"), INERT),
    # code in a string or a file, or a change of what a name runs, whatever the words
    **dict.fromkeys(("enable", "source", ".", "eval", "unalias", "compgen", "fc", "bind",
                     "history"), UNKNOWN),
    **dict.fromkeys(("builtin", "command", "exec"), WRAPPER),  # wrappers.py unwraps them
    **dict.fromkeys(("declare", "typeset", "local"), _declare),
    **dict.fromkeys(("mapfile", "readarray"), _mapfile),
    "export": _export, "readonly": _export, "read": _read, "printf": _option_target("v"),
    "wait": _option_target("p"), "getopts": _getopts, "unset": _unset, "let": _let,
    "set": _set, "shopt": _shopt, "hash": _hash, "alias": _alias, "trap": _trap,
    "test": _test, "[": _test,
}
