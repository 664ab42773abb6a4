"""initd's own log: structlog, configured once, JSON lines for machines, console for people.

Every process above PID 1 logs with structlog; ``Logger`` is structlog's bound logger,
made on the first line written (``bind`` and one method per level, nothing of its own),
because structlog's import is more than the rest of a start together. PID 1's few lines
(pid1/log.py) have the same shape.

structlog's import (asyncio, logging, inspect…) is bench/README.md's row 31. With the
default level (warning, quiet like tini) ``initd -- true`` never imports it.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}
_config = {"level": LEVELS["warning"], "json": True, "generation": 0}
_structlog: Any = None


def configure(verbose: int, log_format: str) -> None:
    """-v shows every phase (info), -vv also the details (debug); -1 errors only."""
    global _structlog
    _config["level"] = {-1: LEVELS["error"], 0: LEVELS["warning"],
                        1: LEVELS["info"]}.get(verbose, LEVELS["debug"])
    _config["json"] = log_format == "json" or (log_format == "auto" and not sys.stderr.isatty())
    _config["generation"] += 1  # (every logger made before is made again)
    _structlog = None


def _backend() -> Any:
    global _structlog
    if _structlog is None:
        import structlog

        renderer: Any = (structlog.processors.JSONRenderer() if _config["json"]
                         else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                renderer,
            ],
            wrapper_class=structlog.make_filtering_bound_logger(_config["level"]),
            # WriteLogger: the line and its newline in one write (see pid1.write_line).
            logger_factory=structlog.WriteLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
            cache_logger_on_first_use=False,
        )
        _structlog = structlog
    return _structlog


class _Stderr:
    """stderr for log lines, which never raise: a closed pipe or a full disk behind it
    (a log collector gone) costs the line, never the supervisor, nor the agent's exit
    code."""

    def write(self, text: str) -> None:
        try:
            sys.stderr.write(text)
        except (OSError, ValueError):
            pass

    def flush(self) -> None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


class Logger:
    """structlog's bound logger, made (structlog imported) when a line is first written."""

    def __init__(self, **bound: Any) -> None:
        self._bound = bound
        self._made: tuple[int, Any] | None = None  # (the configuration it was made in, it)

    def bind(self, **more: Any) -> Logger:
        return Logger(**{**self._bound, **more})

    def _emit(self, level: str, event: str, fields: dict[str, Any]) -> None:
        if LEVELS[level] >= _config["level"]:
            generation = _config["generation"]
            if self._made is None or self._made[0] != generation:
                self._made = generation, _backend().get_logger().bind(**self._bound)
            getattr(self._made[1], level)(event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self._emit("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._emit("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._emit("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._emit("error", event, fields)


def get(**bound: Any) -> Logger:
    return Logger(**bound)


class phase:  # lower case: reads like a function, `with log.phase(logger, "x") as fields:`
    """One event per boot phase, with its duration; the body may add fields to the dict.

    A class rather than @contextmanager: contextlib is one more import on every boot."""

    def __init__(self, logger: Logger, name: str, **fields: Any) -> None:
        self.logger, self.name, self.fields = logger, name, fields

    def __enter__(self) -> dict[str, Any]:
        self.started = time.monotonic()
        return self.fields

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        duration_ms = round((time.monotonic() - self.started) * 1000, 1)
        self.logger.info(self.name, duration_ms=duration_ms, **self.fields)
