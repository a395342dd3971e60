"""One log format for the whole process: a JSON object a line, or a short text line for a terminal.

Every record carries the id of the request it was written for (a contextvar set by
``operations.observe``, copied into render threads with the context), so a warning or a 500's
traceback can be matched to its access line. uvicorn's own loggers go through the same handler; the
chatter of httpx, httpcore and libvips stays below INFO.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import textwrap
import time
from contextvars import ContextVar
from typing import Any, Final, Literal

REQUEST_ID: ContextVar[str | None] = ContextVar("assetgate_request_id", default=None)

# Libraries that log every upstream request or every libvips thread-pool message at INFO/DEBUG.
QUIET_LOGGERS: Final = ("httpx", "httpcore", "hpack", "pyvips", "PIL", "asyncio")
ACCESS_LOGGER: Final = "assetgate.access"

LogFormat = Literal["json", "text"]

# C0 and C1 controls, DEL and the Unicode line/paragraph separators: anything a terminal or a
# log shipper may take as the end of a line, or as a command.
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape_control(text: str) -> str:
    r"""``\n`` -> ``\x0a``: a client's ``%0A`` in a path cannot start a forged log line."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text
    )


_second: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def _timestamp(record: logging.LogRecord) -> str:
    global _second
    whole = int(record.created)
    if _second[0] != whole:  # once a second, not once a line
        _second = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{_second[1]}.{int(record.msecs):03d}Z"


def _request_id(record: logging.LogRecord) -> str | None:
    value = getattr(record, "request_id", None)
    return value if isinstance(value, str) else REQUEST_ID.get()


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", "request_id", "error_id", ...fields}``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)
        if record.name != ACCESS_LOGGER:
            entry["message"] = record.getMessage()
        request_id = _request_id(record)
        if request_id is not None:
            entry["request_id"] = request_id
        error_id = getattr(record, "error_id", None)
        if error_id is not None:
            entry["error_id"] = error_id
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger message [key=value ...]`` for a person at a terminal.

    One record, one line: control characters in it are escaped; a traceback follows on lines
    indented by two spaces, so no line of a record can pass for the start of another.
    """

    def format(self, record: logging.LogRecord) -> str:
        parts = [_timestamp(record), record.levelname, record.name]
        fields = getattr(record, "fields", None)
        if record.name == ACCESS_LOGGER and isinstance(fields, dict):
            parts.append(_access_text(fields))
        else:
            parts.append(record.getMessage())
        request_id = _request_id(record)
        if request_id is not None:
            parts.append(f"request_id={request_id}")
        error_id = getattr(record, "error_id", None)
        if error_id is not None:
            parts.append(f"error_id={error_id}")
        line = _escape_control(" ".join(parts))
        if record.exc_info:
            trace = _CONTROL.sub(
                lambda m: m[0] if m[0] == "\n" else _escape_control(m[0]),
                self.formatException(record.exc_info),
            )
            line += "\n" + textwrap.indent(trace, "  ", lambda _: True)
        return line


def _access_text(fields: dict[str, Any]) -> str:
    cache = f" cache={fields['cache']}" if fields.get("cache") else ""
    return (
        f"{fields.get('client')} {fields.get('method')} {fields.get('path')} "
        f"{fields.get('status')} {fields.get('duration_ms')}ms {fields.get('bytes')}B "
        f"{fields.get('interface')}{cache}"
    )


def configure_logging(level: str, fmt: LogFormat) -> None:
    """One stderr handler on the root logger; uvicorn's loggers hand their records to it."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # Neither format shows a thread's or a process's name or id: a record need not look them up
    # (a few microseconds of every access line).
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # Off: operations.observe writes the one access line (uvicorn checks for handlers per
    # connection).
    uvicorn_access = logging.getLogger("uvicorn.access")
    uvicorn_access.handlers.clear()
    uvicorn_access.propagate = False
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
