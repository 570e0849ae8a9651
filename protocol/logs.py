"""Logging set-up shared by every command: structlog events, readable on the console for
people and as JSON lines in a file for machines (one object per event)."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import structlog

_SHARED = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def configure_logging(
    level: str = "info", json_path: str | Path | None = None, console: bool = True, json_level: str = "info"
) -> None:
    """Route structlog (and stdlib logging) to stderr at ``level`` and, if given, to a
    JSON-lines file at ``json_level`` (decision logs are info: keep the file at info).

    Safe to call more than once: earlier handlers are replaced.
    """
    numeric = logging.getLevelName(level.upper())
    file_numeric = logging.getLevelName(json_level.upper())
    if not isinstance(numeric, int) or not isinstance(file_numeric, int):
        raise ValueError(f"unknown log level {level!r} / {json_level!r}")
    structlog.configure(
        processors=_SHARED + [structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    root.setLevel(min(numeric, file_numeric) if json_path is not None else numeric)
    if console:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(numeric)
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                foreign_pre_chain=_SHARED,
                processors=[
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.dev.ConsoleRenderer(colors=False),
                ],
            )
        )
        root.addHandler(handler)
    if json_path is not None:
        path = Path(json_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(path, mode="a", encoding="utf-8")
        fh.setLevel(file_numeric)
        fh.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                foreign_pre_chain=_SHARED,
                processors=[
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info,
                    structlog.processors.JSONRenderer(),
                ],
            )
        )
        root.addHandler(fh)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A structlog logger whose events carry ``name`` as their ``logger`` field (set up by :func:`configure_logging`)."""
    return structlog.get_logger(name)


def process_seconds() -> float | None:
    """Seconds since this process started (its start time as the kernel recorded it, so the
    interpreter's and the imports' time count), or None where /proc is not there."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return round(uptime - ticks / os.sysconf("SC_CLK_TCK"), 2)
    except (OSError, ValueError, IndexError):
        return None
