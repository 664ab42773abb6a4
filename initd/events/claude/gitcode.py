"""Shell code git runs from the strings of a command line: a configuration value given
with ``-c`` (or ``git config``), a variable in its environment, an option of a subcommand.

git runs these with ``sh -c``, its arguments after them as ``"$@"``: the alias ``!rm -rf
x``, ``core.pager``, ``GIT_PAGER``, ``rebase -x``, ``push --receive-pack``… (git-config(1),
git(1) and each command's page, git 2.39). A literal value is read as the shell reads it
(``VALUE "$@"``) and the rule is tested on what it runs, so ``GIT_PAGER=cat git log`` is
proven and ``git -c core.pager='rm -rf x' -p log`` matches ``Bash(rm *)``. A value known
only when it runs, a key git may run that initd does not know as data (CODE_KEYS, and
every key outside DATA_KEYS and DATA_SECTIONS: ``include.path``, ``core.hooksPath``,
``protocol.ext.allow``…), an alias that renames a git command, ``GIT_CONFIG_*`` and
``GIT_CONFIG_PARAMETERS``, and any ``GIT_*`` variable git(1) does not list as data raise
Unknown: the hook runs. git's configuration files are files: what they hold is not read,
as a script a command runs is not.
"""

from __future__ import annotations

from typing import NamedTuple

from initd.events.claude.words import Unknown, Word, drop, literal, prefix

Words = tuple[Word, ...]
# what git and the programs it starts run as a command (git(1), ENVIRONMENT VARIABLES;
# git-var(1): GIT_EDITOR, then core.editor, VISUAL, EDITOR; GIT_PAGER, core.pager, PAGER)
CODE_VARIABLES = {"GIT_PAGER", "PAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
                  "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS",
                  "SSH_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND"}
# git(1)'s variables that name files, people, dates and switches, never a command
GIT_DATA = {"GIT_INDEX_FILE", "GIT_INDEX_VERSION", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_DIR", "GIT_WORK_TREE", "GIT_NAMESPACE",
            "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_COMMON_DIR",
            "GIT_DEFAULT_HASH", "GIT_DIFF_OPTS", "GIT_MERGE_VERBOSITY", "GIT_PROGRESS_DELAY",
            "GIT_SSH_VARIANT", "GIT_SSL_NO_VERIFY", "GIT_TERMINAL_PROMPT",
            "GIT_CONFIG_NOSYSTEM", "GIT_FLUSH", "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS",
            "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS", "GIT_REFLOG_ACTION",
            "GIT_REF_PARANOIA", "GIT_PROTOCOL_FROM_USER", "GIT_OPTIONAL_LOCKS",
            "GIT_REDIRECT_STDIN", "GIT_REDIRECT_STDOUT", "GIT_REDIRECT_STDERR",
            "GIT_PRINT_SHA1_ELLIPSIS", "GIT_MERGE_AUTOEDIT"}
GIT_DATA_PREFIXES = ("GIT_AUTHOR_", "GIT_COMMITTER_", "GIT_TRACE")
# git-config(1): "The value is meant to be interpreted by the shell", "evaluated in shell",
# "shell command", "the command to invoke": every key (SUB a subsection) whose value git
# runs. Keys are case-blind but for the subsection.
CODE_KEYS = {
    "core.pager", "core.editor", "sequence.editor", "core.askpass", "core.sshcommand",
    "core.fsmonitor", "core.gitproxy", "core.alternaterefscommand", "diff.external",
    "diff.SUB.command", "diff.SUB.textconv", "difftool.SUB.cmd", "difftool.SUB.path",
    "mergetool.SUB.cmd", "mergetool.SUB.path", "merge.SUB.driver", "filter.SUB.clean",
    "filter.SUB.smudge", "filter.SUB.process", "credential.helper",
    "credential.SUB.helper", "gpg.program", "gpg.SUB.program",
    "gpg.ssh.defaultkeycommand", "browser.SUB.cmd", "browser.SUB.path", "man.SUB.cmd",
    "man.SUB.path", "guitool.SUB.cmd", "interactive.difffilter",
    "uploadpack.packobjectshook", "remote.SUB.uploadpack", "remote.SUB.receivepack"}
BOOLEAN = {"", "true", "false", "yes", "no", "on", "off", "1", "0"}  # pager.<cmd>, fsmonitor
# keys git only reads as data (names, switches, numbers), the common ones an agent sets
DATA_SECTIONS = {"user", "author", "committer", "color", "advice", "i18n", "column"}
DATA_KEYS = {
    "init.defaultbranch", "core.autocrlf", "core.safecrlf", "core.eol", "core.filemode",
    "core.ignorecase", "core.quotepath", "core.abbrev", "core.precomposeunicode",
    "core.whitespace", "core.compression", "core.bigfilethreshold", "core.symlinks",
    "core.logallrefupdates", "core.preloadindex", "core.untrackedcache", "core.checkstat",
    "core.trustctime", "core.sharedrepository", "commit.gpgsign", "commit.verbose",
    "commit.cleanup", "commit.status", "tag.gpgsign", "tag.sort", "pull.rebase",
    "pull.ff", "merge.ff", "merge.conflictstyle", "merge.log", "merge.stat",
    "merge.autostash", "merge.renames", "rebase.autosquash", "rebase.autostash",
    "rebase.updaterefs", "rebase.stat", "push.default", "push.autosetupremote",
    "push.followtags", "fetch.prune", "fetch.prunetags", "fetch.parallel",
    "fetch.recursesubmodules", "diff.renames", "diff.noprefix", "diff.mnemonicprefix",
    "diff.algorithm", "diff.colormoved", "diff.relative", "diff.ignoresubmodules",
    "log.date", "log.decorate", "log.showroot", "log.follow", "status.showuntrackedfiles",
    "status.short", "status.branch", "status.relativepaths", "gc.auto", "gc.autodetach",
    "maintenance.auto", "safe.directory", "http.sslverify", "http.postbuffer",
    "pack.threads", "checkout.defaultremote", "branch.autosetupmerge",
    "branch.autosetuprebase", "branch.sort", "rerere.enabled", "rerere.autoupdate",
    "feature.manyfiles", "index.version", "versionsort.suffix", "protocol.version",
    "submodule.recurse", "transfer.fsckobjects", "receive.denycurrentbranch"}
# git's own options before the command that take the next word (git(1), OPTIONS)
GLOBAL_VALUED = {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                 "--attr-source", "--shallow-file"}
# each command's options whose value is code (long names, short letters), from its page
CONFIG_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {"clone": (("config",), "c")}
CODE_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "rebase": (("exec",), "x"), "difftool": (("extcmd",), "x"),
    "grep": (("open-files-in-pager",), "O"), "clone": (("upload-pack",), "u"),
    "fetch": (("upload-pack",), ""), "pull": (("upload-pack",), ""),
    "ls-remote": (("upload-pack", "exec"), ""), "fetch-pack": (("upload-pack", "exec"), ""),
    "archive": (("exec",), ""), "push": (("receive-pack", "exec"), ""),
    "send-pack": (("receive-pack", "exec"), ""), "daemon": (("access-hook",), ""),
    "instaweb": (("httpd", "browser"), "db"),
    "send-email": (("sendmail-cmd", "smtp-server", "to-cmd", "cc-cmd", "header-cmd"), ""),
    "filter-branch": (("setup", "env-filter", "tree-filter", "index-filter",
                       "parent-filter", "msg-filter", "commit-filter", "tag-name-filter"),
                      ""),
}


class Code(NamedTuple):
    """What a git command line runs besides git: shell code, and commands as words."""

    strings: list[str]
    commands: list[Words]


def variable(name: str, value: Word | None) -> str | None:
    """The code in a variable git (or the programs it starts) runs; Unknown for one of
    git's that is not data; None for any other."""
    if name in CODE_VARIABLES:
        code = None if value is None else literal(value)
        if code is None:
            raise Unknown
        return code or None  # GIT_PAGER= : none
    if name.startswith("GIT_") and name not in GIT_DATA and \
            not name.startswith(GIT_DATA_PREFIXES):
        raise Unknown  # GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT…, GIT_ALLOW_PROTOCOL
    return None


def config(key: str, value: str | None) -> str | None:
    """The code git runs for ``key`` set to ``value`` (None: from the environment);
    None for data; Unknown for a key git may run that is not known to be data."""
    section, _, rest = key.partition(".")
    sub, _, name = rest.rpartition(".")
    section, name = section.lower(), name.lower()
    shape = f"{section}.{'SUB.' if sub else ''}{name}"
    if section == "alias" and not sub:
        if value is None or not value.startswith("!"):
            raise Unknown  # a git command under another name (or code from the env)
        return value[1:]
    if (section == "pager" and not sub) or shape in CODE_KEYS:
        if value is None:
            raise Unknown
        if not value or ((section == "pager" or shape == "core.fsmonitor") and
                         value.lower() in BOOLEAN):
            return None  # core.pager= (none), pager.log=false, core.fsmonitor=true
        if section == "credential" and not value.startswith(("!", "/")):
            return f"git credential-{value}"  # a helper's name: git runs git-credential-NAME
        return value[1:] if section == "credential" and value.startswith("!") else value
    if section in DATA_SECTIONS or shape in DATA_KEYS:
        return None
    raise Unknown


def strings(program: str, args: Words) -> Code:
    """The code ``git ARGS`` runs from its strings (Unknown: not known before it runs)."""
    found = Code([], [])
    if program != "git":
        return found
    at = 0
    while at < len(args):
        option = literal(args[at])
        if option is None:
            raise Unknown  # git $X …: an option, or the command
        nxt = args[at + 1] if at + 1 < len(args) else ("",)
        if option in ("-c", "--config-env") or option.startswith("--config-env="):
            pair = nxt if "=" not in option else (option.partition("=")[2],)
            found.strings.extend(_pair(pair, env=option != "-c"))
            at += 1 if "=" in option else 2
        elif option.startswith("--exec-path="):
            raise Unknown  # git's own commands from another directory
        elif option in GLOBAL_VALUED:
            at += 2
        elif option.startswith("-"):
            at += 1
        else:
            break
    if at < len(args):
        _command(literal(args[at]), args[at + 1:], found)
        if at:  # also tested without git's own options: git -C . push is a git push
            found.commands.append((("git",), *args[at:]))
    return found


def _pair(word: Word, env: bool = False) -> list[str]:
    """``KEY=VALUE`` (``--config-env``: ``KEY=ENVVAR``, the value not in the line)."""
    head = prefix(word)
    if "=" not in head and literal(word) is None:
        raise Unknown
    key, equals, _ = head.partition("=")
    value = literal(word)
    if env or value is None:
        code = config(key, None)  # the value is not in the line
    else:
        code = config(key, value.partition("=")[2] if equals else "true")  # -c x.y: true
    return [] if code is None else [code]


def _command(name: str | None, args: Words, found: Code) -> None:
    """What the git command ``name`` runs from its arguments."""
    if name is None:
        raise Unknown  # git -C x $CMD …
    if name == "config":
        found.strings.extend(_config_command(args))
    elif name in PUSHING:  # git send-pack --force DIR main: a force push by another name
        found.commands.append((("git",), ("push",), *args))
    elif name in ("submodule", "bisect"):
        verb = "foreach" if name == "submodule" else "run"
        at = next((i for i, w in enumerate(args) if not prefix(w).startswith("-")), len(args))
        if at < len(args) and literal(args[at]) is None:
            raise Unknown
        if at < len(args) and literal(args[at]) == verb:
            rest = args[at + 1:]
            while name == "submodule" and rest and prefix(rest[0]).startswith("-"):
                rest = rest[1:]  # foreach --recursive, --quiet
            if name == "submodule" and len(rest) == 1:  # one word: run with sh -c
                found.strings.append(literal(rest[0]) or _unknown())
            elif rest:
                found.commands.append(rest)  # several: run as a command, no shell
    for value in _values(args, *CONFIG_OPTIONS.get(name, ((), ""))):
        found.strings.extend(_pair(value))
    for value in _values(args, *CODE_OPTIONS.get(name, ((), ""))):
        found.strings.append(literal(value) or _unknown())


def _unknown() -> str:
    raise Unknown


def _values(args: Words, long: tuple[str, ...], short: str) -> list[Word]:
    """The values of the options named (git's parse-options: ``--exec=X``, ``--exec X``,
    a unique prefix ``--exe X``, ``-xX``, ``-x X``, ``-ix X``), up to ``--``."""
    found: list[Word] = []
    if not long and not short:
        return found
    at = 0
    while at < len(args):
        head, whole = prefix(args[at]), literal(args[at])
        nxt = args[at + 1] if at + 1 < len(args) else ("",)
        at += 1
        if whole is None and (not head or head.startswith("-")):
            raise Unknown  # "$OPT": --exec=CODE, for all the line says
        if head == "--":
            break
        name, equals, _ = head[2:].partition("=")
        if head.startswith("--") and name and any(o.startswith(name) for o in long):
            found.append(drop(args[at - 1], len(name) + 3) if equals else nxt)
            at += 0 if equals else 1
            continue
        if head.startswith("-") and not head.startswith("--"):
            hit = next((i for i, c in enumerate(head[1:], 1) if c in short), None)
            if hit is not None:
                stuck = drop(args[at - 1], hit + 1)
                found.append(stuck if prefix(stuck) or literal(stuck) is None else nxt)
                at += 0 if prefix(stuck) or literal(stuck) is None else 1
    return found


PUSHING = {"send-pack", "http-push"}  # git's pushes of plumbing: each is a git push
CONFIG_VALUED = {"-f", "--file", "--blob", "--type", "--default", "--comment"}
CONFIG_READS = {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                "--get-colorbool", "--unset", "--unset-all", "--remove-section", "-l",
                "--list", "get", "list", "unset", "remove-section", "edit", "-e", "--edit"}


def _config_command(args: Words) -> list[str]:
    """``git config [options] KEY VALUE`` (``git config set KEY VALUE``) sets what a
    ``-c`` would; a query or removal sets nothing; ``--rename-section`` can make any
    section an ``alias`` one."""
    words: list[Word] = []
    reads = False
    at = 0
    while at < len(args):
        head = prefix(args[at])
        if not head or (head.startswith("-") and literal(args[at]) is None):
            raise Unknown
        if head in ("--rename-section", "rename-section") and not words:
            raise Unknown
        if head.startswith("-"):
            reads |= head in CONFIG_READS
            at += 2 if head in CONFIG_VALUED else 1
            continue
        reads |= not words and head in CONFIG_READS  # git config get|list|unset|edit …
        words.append(args[at])
        at += 1
    if words and literal(words[0]) == "set":
        words = words[1:]
    if reads or len(words) < 2:
        return []
    key = literal(words[0])
    if key is None:
        raise Unknown
    code = config(key, literal(words[1]))
    return [] if code is None else [code]
