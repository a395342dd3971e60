"""The port-43 client against a real loopback whois server: chunks, deadlines, caps."""

from __future__ import annotations

import asyncio
import time

import pytest

from assetgate.whois.charset import JAPANESE, decode
from assetgate.whois.port43 import query_port43
from assetgate.whois.upstream import FetchError
from tests.whois.conftest import closed_port, sample
from tests.whois.fakes import Reply, WhoisServer

pytestmark = pytest.mark.anyio


async def test_iso_2022_jp_in_small_chunks_is_decoded_whole() -> None:
    text = sample("jprs_general_ja.txt")
    body = text.encode("iso-2022-jp")
    server = await WhoisServer({"example.jp/e": Reply(body, chunk_bytes=3)}).start()
    try:
        data = await query_port43("127.0.0.1", server.port, "example.jp/e", timeout_s=2)
    finally:
        await server.close()
    assert data == body
    assert decode(data, JAPANESE) == (text, "iso-2022-jp")
    assert server.queries == ["example.jp/e"]


async def test_the_query_is_one_crlf_line() -> None:
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read(100))
        writer.write(b"ok")
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        assert await query_port43("127.0.0.1", port, "domain example.com", timeout_s=2) == b"ok"
    finally:
        server.close()
    assert received == [b"domain example.com\r\n"]


@pytest.mark.parametrize("line", ["a.com\r\nb.com", "a.com\n", "bücher.de"])
async def test_refuses_to_send_anything_but_one_ascii_line(line: str) -> None:
    with pytest.raises(ValueError, match="one ASCII line"):
        await query_port43("127.0.0.1", 9, line, timeout_s=1)


async def test_deadline_covers_a_server_that_never_finishes() -> None:
    server = await WhoisServer({"x.com": Reply(b"Domain: x\n", delay_s=5)}).start()
    started = time.perf_counter()
    try:
        with pytest.raises(FetchError, match="timed out"):
            await query_port43("127.0.0.1", server.port, "x.com", timeout_s=0.3)
    finally:
        await server.close()
    assert time.perf_counter() - started < 3.5  # the 0.3 s deadline, not the server's 5 s


async def test_trickling_server_is_cut_by_the_total_deadline() -> None:
    body = b"x" * 200
    server = await WhoisServer({"x.com": Reply(body, chunk_bytes=1, chunk_delay_s=0.01)}).start()
    try:
        with pytest.raises(FetchError, match="timed out"):
            await query_port43("127.0.0.1", server.port, "x.com", timeout_s=0.3)
    finally:
        await server.close()


async def test_oversized_answer_is_refused() -> None:
    server = await WhoisServer({"x.com": Reply(b"y" * 70_000)}).start()
    try:
        with pytest.raises(FetchError, match="exceeds 64 KiB"):
            await query_port43("127.0.0.1", server.port, "x.com", timeout_s=2, max_bytes=64 * 1024)
        data = await query_port43("127.0.0.1", server.port, "x.com", timeout_s=2)
    finally:
        await server.close()
    assert len(data) == 70_000


async def test_connection_refused() -> None:
    with pytest.raises(FetchError, match="refused"):
        await query_port43("127.0.0.1", closed_port(), "x.com", timeout_s=1)
