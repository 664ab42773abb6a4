"""What the programs a command line names run of their words: wrappers that run the rest as
a command (after their options, as getopt reads them), shells, programs that always run a
string or a shell, and the shell code ``watch`` and ``flock -c`` give one (wrappers.py
reads the commands through them)."""

from __future__ import annotations

from initd.events.claude.words import Unknown, Word, literal

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
    "watch": ("nq", ("--interval", "--equexit"), 0),  # and sh -c (shell_string)
    "flock": ("Ew", ("--conflict-exit-code", "--timeout", "--wait"), 1),  # and -c CODE
    "chrt": ("", (), 1), "taskset": ("", (), 1),
    "chroot": ("", ("--userspec", "--groups"), 1),
    "strace": ("abeEIoOpPsSuX", ("--output",), 0),
    # util-linux's other runners (setarch ARCH, and under its other names)
    **dict.fromkeys(("setarch", "linux32", "linux64", "i386", "x86_64"), ("", (), 0)),
    "unshare": ("RwSG", ("--root", "--wd", "--setuid", "--setgid", "--propagation",
                         "--setgroups", "--monotonic", "--boottime", "--map-user",
                         "--map-group", "--map-users", "--map-groups"), 0),
    "nsenter": ("tSGW", ("--target", "--setuid", "--setgid", "--wdns"), 0),
    "prlimit": ("po", ("--pid", "--output"), 0),
    "setpriv": ("", ("--ambient-caps", "--inh-caps", "--bounding-set", "--ruid", "--euid",
                     "--rgid", "--egid", "--reuid", "--regid", "--groups", "--securebits",
                     "--pdeathsig", "--selinux-label", "--apparmor-profile"), 0),
}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash"}
ALWAYS_CODE = {"su", "runuser", "script", "parallel", "sg", "newgrp"}  # a string, or a shell
# with no program to run, a shell (which reads standard input, or a terminal)
SHELL_IF_NONE = {"setarch", "linux32", "linux64", "i386", "x86_64", "unshare", "nsenter",
                 "chroot"}


def past_options(program: str, args: Words, at: int) -> int:
    """Where ``program``'s options end in ``args`` (from ``at``), as getopt reads them up
    to its first operand (or ``--``); -1 for ``command -v``, a query."""
    short, long, _ = WRAPPERS[program]
    while at < len(args):
        word = literal(args[at])
        if word is None:
            raise Unknown  # an option or the command, known only when it runs
        if word == "--":
            return at + 1
        if not word.startswith("-") or (word == "-" and program != "env"):
            break
        if program == "command" and word in ("-v", "-V"):
            return -1
        if program == "env" and splits(word):
            raise Unknown  # env -S 'rm -rf x': a string split into a command
        at += 1 + takes_value(word, short, long)
    return at


def shell_string(program: str, args: Words) -> list[str | None]:
    """The code ``watch`` gives ``sh -c`` (its words joined, without ``-x``) and ``flock
    FILE -c CODE`` gives ``$SHELL -c`` (util-linux's flock.c: ``-c`` or ``--command``
    right after the file)."""
    if program not in ("watch", "flock"):
        return []
    at = past_options(program, args, 0)
    if program == "watch":
        if any(_exec_option(literal(word) or "") for word in args[:at]):
            return []  # watch -x: the words are the command, unwrapped as any wrapper's
        words = [literal(word) for word in args[at:]]
        if None in words:
            raise Unknown
        return [" ".join(str(word) for word in words)] if words else []
    after = literal(args[at + 1]) if at + 1 < len(args) else ""
    if after is None:
        raise Unknown  # flock FILE "$X" …: -c, or the program
    if after not in ("-c", "--command"):
        return []  # flock FILE PROGRAM ARGS: a wrapper's (or nothing: it takes the lock)
    code = literal(args[at + 2]) if at + 2 < len(args) else ""
    if code is None:
        raise Unknown
    return [code]


def _exec_option(word: str) -> bool:
    """watch's -x (--exec, a unique prefix of it, or -x among other letters)."""
    if word.startswith("--"):
        return len(word) > 3 and "--exec".startswith(word)
    letters = word[1:]
    return word.startswith("-") and "x" in letters.split("n")[0].split("q")[0]


def splits(option: str) -> bool:
    """env's -S (--split-string, or any prefix of it getopt_long takes)."""
    if option.startswith("--"):
        name = option.partition("=")[0]
        return len(name) > 2 and "--split-string".startswith(name)
    return "S" in option[1:]


def takes_value(word: str, short: str, long: tuple[str, ...]) -> int:
    """1 when the option ``word`` takes the next word as its value (``-k 5``,
    ``--signal KILL``, getopt_long's unique prefix ``--sig KILL``), else 0."""
    if word.startswith("--"):
        return int("=" not in word and any(opt.startswith(word) for opt in long))
    for at, char in enumerate(word[1:], 1):
        if char in short:
            return int(at == len(word) - 1)  # -kKILL carries its value
    return 0
