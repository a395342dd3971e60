"""Whois over TCP port 43 (RFC 3912) on asyncio streams, bounded in time and size.

The protocol is one query line ending in CRLF, then the server talks until it closes. The line
is built from the validated A-label and the server's fixed decoration only (``domain.py`` makes
sure nothing else can get in), the whole exchange runs under one deadline, and the answer is
accumulated as bytes up to ``WHOIS_MAX_BYTES`` and decoded once by ``charset``.
Failure reasons are bare ("connection refused"): the caller prefixes the server's public name.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

from assetgate.whois.upstream import FetchError

WHOIS_MAX_BYTES: Final = 256 * 1024
READ_CHUNK_BYTES: Final = 16 * 1024


async def query_port43(
    address: str, port: int, line: str, *, timeout_s: float, max_bytes: int = WHOIS_MAX_BYTES
) -> bytes:
    """Send ``line`` to ``address:port`` and return the whole answer."""
    if "\r" in line or "\n" in line or not line.isascii():
        raise ValueError("a whois query is one ASCII line")  # domain.py must prevent this
    if timeout_s <= 0:
        raise FetchError("timed out")
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(address, port, limit=READ_CHUNK_BYTES)
            writer.write(line.encode("ascii") + b"\r\n")
            await writer.drain()
            return await _read_all(reader, max_bytes)
    except TimeoutError:
        raise FetchError("timed out") from None
    except ConnectionRefusedError:
        raise FetchError("connection refused") from None
    except OSError:
        raise FetchError("could not be reached") from None
    finally:
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError, TimeoutError):
                async with asyncio.timeout(0.5):
                    await writer.wait_closed()


async def _read_all(reader: asyncio.StreamReader, max_bytes: int) -> bytes:
    answer = bytearray()
    while chunk := await reader.read(READ_CHUNK_BYTES):
        answer += chunk
        if len(answer) > max_bytes:
            raise FetchError(f"answer exceeds {max_bytes // 1024} KiB")
    return bytes(answer)
