"""Benchmark of the whois interface: cold-lookup overhead and cached lookups per second.

    .venv/bin/python bench/whois.py              # about a minute on 2 cores
    .venv/bin/python bench/whois.py --markdown   # also print the README table

Everything runs on loopback, started by this script, and every ratio has its reference measured
in the same run:

1. Cold lookup overhead. A whois server (this script with ``--serve-whois``, its own process)
   answers like the registries do: a JPRS answer in ISO-2022-JP for ``.jp`` (one hop) and a
   Verisign thin answer plus the registrar's answer for ``.com`` (two hops). The reference is the
   server's own latency: the same queries sent straight to it from this process over fresh TCP
   connections (what any whois client must pay). Then ``GET /api/whois/json`` on ``assetgate
   serve`` for names never asked before (so never cached), one request at a time on a kept-alive
   HTTP connection. Added = service median - direct median; it includes the HTTP request itself
   (``/healthz`` latency is printed too). Target: <= 5 ms added. Direct, service and health
   requests are interleaved so a burst of other work on a shared machine hits all three alike.
2. Cached lookups per second. ``wrk`` (one thread, 16 connections) on a cached
   ``/api/whois/json`` against ``/healthz`` on the same server: the ratio is how much of the bare
   HTTP request rate a cached lookup keeps (rate-limit accounting, validation, cache, JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

import loadgen

REGISTRAR = "whois.registrar.bench"
JPRS = """Domain Information: [ドメイン情報]
[Domain Name]                   {name}

[登録者名]                      株式会社エグザンプル
[Registrant]                    Example K.K.

[Name Server]                   ns1.example.jp
[Name Server]                   ns2.example.jp

[登録年月日]                    2001/02/07
[有効期限]                      2026/02/28
[状態]                          Active
[最終更新]                      2025/03/01 01:05:03 (JST)

Contact Information: [公開連絡窓口]
[名前]                          株式会社エグザンプル
[Email]                         hostmaster@example.jp
[郵便番号]                      100-0001
[住所]                          東京都千代田区千代田1-1-1
[電話番号]                      03-1234-5678
"""
THIN = """   Domain Name: {name}
   Registry Domain ID: 2336799_DOMAIN_COM-VRSN
   Registrar WHOIS Server: {registrar}
   Updated Date: 2024-08-14T07:01:34Z
   Creation Date: 1995-08-14T04:00:00Z
   Registry Expiry Date: 2026-08-13T04:00:00Z
   Registrar: Example Registrar, Inc.
   Registrar IANA ID: 376
   Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited
   Name Server: A.IANA-SERVERS.NET
   Name Server: B.IANA-SERVERS.NET
   DNSSEC: signedDelegation
>>> Last update of whois database: 2025-06-01T12:00:00Z <<<
"""
REGISTRAR_ANSWER = """Domain Name: {name}
Registrar: Example Registrar, Inc.
Registrant Name: REDACTED FOR PRIVACY
Registrant Organization: Example Holdings LLC
Registrant Country: US
Tech Name: Hostmaster
Tech Email: hostmaster@{name}
Name Server: a.iana-servers.net
"""


# --- the registry whois server (a process of its own) ---------------------------------------


def answer(query: str) -> bytes:
    if query.startswith("domain "):
        return THIN.format(name=query[7:].upper(), registrar=REGISTRAR).encode()
    if query.endswith("/e"):
        return JPRS.format(name=query[:-2].upper()).encode("iso-2022-jp")
    return REGISTRAR_ANSWER.format(name=query).encode()


async def serve_whois(port: int) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        writer.write(answer(line.decode("ascii").strip()))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=512)
    async with server:
        await server.serve_forever()


def start_whois(port: int, log: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, __file__, "--serve-whois", str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            direct_query(port, "ping.example.com")
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("bench whois server did not start")


def direct_query(port: int, query: str) -> bytes:
    """What a plain whois client pays: connect, one line, read to EOF."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(query.encode("ascii") + b"\r\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


# --- measurements ---------------------------------------------------------------------------


def cold_overhead(client: httpx.Client, whois_port: int, tld: str, rounds: int) -> dict[str, float]:
    direct, service, health = [], [], []
    for index in range(rounds):
        name = f"cold-{index}-{time.monotonic_ns()}.{tld}"
        start = time.perf_counter()
        if tld == "com":
            direct_query(whois_port, f"domain {name}")
            direct_query(whois_port, name)
        else:
            direct_query(whois_port, f"{name}/e")
        direct.append(time.perf_counter() - start)

        start = time.perf_counter()
        reply = client.get("/api/whois/json", params={"domain": name})
        service.append(time.perf_counter() - start)
        record = reply.json()
        hops = 2 if tld == "com" else 1
        assert reply.status_code == 200, reply.text
        assert (record["registered"], record["source"]["cached"]) == (True, False), record
        assert record["source"]["hops"] == hops, record

        start = time.perf_counter()
        client.get("/healthz")
        health.append(time.perf_counter() - start)
    direct_ms = 1000 * statistics.median(direct)
    service_ms = 1000 * statistics.median(service)
    return {
        "direct_ms": direct_ms,
        "service_ms": service_ms,
        "added_ms": service_ms - direct_ms,
        "health_ms": 1000 * statistics.median(health),
        "ratio": service_ms / direct_ms,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve-whois", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=300, help="cold lookups per scenario")
    parser.add_argument("--seconds", type=int, default=5, help="wrk duration per point")
    parser.add_argument("--markdown", action="store_true", help="print the README table")
    args = parser.parse_args()
    if args.serve_whois:
        asyncio.run(serve_whois(args.serve_whois))
        return 0

    wrk = loadgen.ensure_wrk()
    work = Path(tempfile.mkdtemp(prefix="whois-bench-"))
    whois_port, app_port = loadgen.free_port(), loadgen.free_port()
    whois = start_whois(whois_port, work / "whois.log")
    servers = work / "servers.json"
    address = f"127.0.0.1:{whois_port}"
    servers.write_text(json.dumps({"com": address, "jp": address, REGISTRAR: address}))
    env = {
        **os.environ,
        "ASSETGATE_PORT": str(app_port),
        "ASSETGATE_WORKERS": "1",
        "ASSETGATE_WHOIS_SERVERS": str(servers),
        "ASSETGATE_RATE_LIMIT": "1000000/1 second",
        "ASSETGATE_LOG_LEVEL": "warning",
    }
    argv = [sys.executable, "-m", "assetgate", "serve", "--host", "127.0.0.1"]
    app = loadgen.start_server(
        "assetgate", argv, port=app_port, health_path="/healthz", log=work / "app.log", env=env
    )
    try:
        with httpx.Client(base_url=app.base_url, timeout=30) as client:
            cold_overhead(client, whois_port, "jp", 20)  # warm-up
            cold = {
                tld: cold_overhead(client, whois_port, tld, args.rounds) for tld in ("jp", "com")
            }
            client.get("/api/whois/json", params={"domain": "example.com"})
        url = f"{app.base_url}/api/whois/json?domain=example.com"
        cached = loadgen.run_wrk(
            wrk, url, connections=16, duration_s=args.seconds, server_pid=app.pid, script_dir=work
        )
        health = loadgen.run_wrk(
            wrk,
            f"{app.base_url}/healthz",
            connections=16,
            duration_s=args.seconds,
            server_pid=app.pid,
            script_dir=work,
        )
    finally:
        app.stop()
        whois.terminate()
        whois.wait(timeout=10)

    print("cold lookups (median of", args.rounds, "each, ms):")
    for tld, row in cold.items():
        label = ".jp, 1 hop, ISO-2022-JP" if tld == "jp" else ".com, 2 hops (thin + registrar)"
        print(
            f"  {label:34} direct {row['direct_ms']:.2f}  service {row['service_ms']:.2f}  "
            f"added {row['added_ms']:.2f}  (/healthz {row['health_ms']:.2f})  "
            f"ratio {row['ratio']:.2f}x"
        )
    ratio = cached.rps / health.rps
    print(
        f"cached lookups: {cached.rps:.0f}/s (p50 {cached.p50_ms:.2f} ms, errors {cached.errors})"
        f" vs /healthz {health.rps:.0f}/s -> ratio {ratio:.2f}"
        f"  [foreign CPU {cached.foreign_cpu_pct:.0f}% / {health.foreign_cpu_pct:.0f}%]"
    )
    if args.markdown:
        print()
        print("| Measurement | Reference (same run) | assetgate | Result |")
        print("|---|---|---|---|")
        for tld, row in cold.items():
            what = (
                "Cold `.jp` lookup (1 hop, ISO-2022-JP)"
                if tld == "jp"
                else ("Cold `.com` lookup (thin registry + registrar)")
            )
            print(
                f"| {what}, median | whois server direct {row['direct_ms']:.2f} ms | "
                f"{row['service_ms']:.2f} ms | **+{row['added_ms']:.2f} ms** "
                f"(target ≤ 5 ms; HTTP alone {row['health_ms']:.2f} ms) |"
            )
        print(
            f"| Cached lookups, wrk 1 thread × 16 connections | `/healthz` {health.rps:.0f}/s | "
            f"{cached.rps:.0f}/s | **{ratio:.2f}×** of the bare HTTP rate |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
