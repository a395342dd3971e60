"""The IANA RDAP bootstrap for DNS (RFC 9224): which RDAP server answers for a TLD.

A snapshot ships in the package (``data/rdap_dns.json``, every TLD with an HTTPS RDAP server in
IANA's bootstrap of 2025, see ``scripts/make_rdap_snapshot.py``) so the service works and its
tests run with no network; ``ASSETGATE_RDAP_BOOTSTRAP`` names a file that replaces it (for
example a fresh copy of IANA's ``dns.json``, refreshed by cron: ``BootstrapFile`` notices a new
copy without a restart and keeps the last good one when a copy does not parse). Servers listed
in the operator's file are trusted like those of ``ASSETGATE_WHOIS_SERVERS``; the shipped
snapshot's are not (they go through the SSRF guard like any other public server).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from assetgate.settings import is_inline_json, json_value

SNAPSHOT: Final = "rdap_dns.json"
OVERRIDES: Final = "rdap_overrides.json"
CHECK_EVERY_S: Final = 30.0

log = logging.getLogger("assetgate.whois")


@dataclass(frozen=True, slots=True)
class Bootstrap:
    services: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    trusted: bool = False
    publication: str = ""
    from_overrides: frozenset[str] = frozenset()  # TLDs the shipped list filled: never trusted

    def bases(self, domain: str) -> tuple[str, ...]:
        """Base URLs for ``domain`` by longest label match (RFC 9224 §4), HTTPS first."""
        labels = domain.lower().split(".")
        for start in range(len(labels)):
            urls = self.services.get(".".join(labels[start:]))
            if urls:
                return urls
        return ()

    def trusted_origins(self) -> frozenset[tuple[str, str, int]]:
        if not self.trusted:
            return frozenset()
        return frozenset(
            origin(url)
            for tld, urls in self.services.items()
            if tld not in self.from_overrides
            for url in urls
        )


def origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def parse_bootstrap(doc: object, *, trusted: bool) -> Bootstrap:
    """RFC 9224 §3 ``{"services": [[["com", "net"], ["https://…/"]], …]}``; ValueError if bad."""
    if not isinstance(doc, dict) or not isinstance(doc.get("services"), list):
        raise ValueError("RDAP bootstrap: expected an object with a services list")
    services: dict[str, tuple[str, ...]] = {}
    for entry in doc["services"]:
        if not (isinstance(entry, list) and len(entry) >= 2):
            raise ValueError("RDAP bootstrap: each service is [[tlds], [urls]]")
        tlds, urls = entry[0], entry[1]
        if not (isinstance(tlds, list) and isinstance(urls, list)):
            raise ValueError("RDAP bootstrap: each service is [[tlds], [urls]]")
        clean = [
            u if u.endswith("/") else u + "/"
            for u in urls
            if isinstance(u, str) and u.lower().startswith(("https://", "http://"))
        ]
        ordered = tuple(sorted(clean, key=lambda u: not u.lower().startswith("https://")))
        for tld in tlds:
            if isinstance(tld, str) and ordered:
                services[tld.lower().strip(".")] = ordered
    publication = doc.get("publication")
    return Bootstrap(services, trusted, publication if isinstance(publication, str) else "")


def load_overrides() -> dict[str, tuple[str, ...]]:
    """The shipped dated override list: TLD -> (base URL,), from ``data/rdap_overrides.json``."""
    text = resources.files("assetgate.whois").joinpath("data", OVERRIDES).read_text("utf-8")
    doc = json.loads(text)
    return {
        tld.lower(): (entry["url"] if entry["url"].endswith("/") else entry["url"] + "/",)
        for tld, entry in doc["overrides"].items()
        if str(entry["url"]).startswith("https://")
    }


def with_overrides(bootstrap: Bootstrap, overrides: Mapping[str, tuple[str, ...]]) -> Bootstrap:
    """The snapshot: the overrides win (they are newer). An operator's file: they only fill the
    TLDs it lacks (IANA's own file went without .io after 2025-08-04)."""
    if bootstrap.trusted:
        added = frozenset(overrides) - frozenset(bootstrap.services)
        merged = {**overrides, **bootstrap.services}
    else:
        added = frozenset(overrides)
        merged = {**bootstrap.services, **overrides}
    return replace(bootstrap, services=merged, from_overrides=added)


def load_bootstrap(value: str | os.PathLike[str] | None) -> Bootstrap:
    """The operator's bootstrap when given (inline JSON or its file: ``settings.json_value``),
    else the shipped snapshot; with the override list."""
    if value is not None:
        return with_overrides(parse_bootstrap(json_value(value), trusted=True), load_overrides())
    try:
        text = resources.files("assetgate.whois").joinpath("data", SNAPSHOT).read_text("utf-8")
        doc = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ValueError(f"RDAP bootstrap {SNAPSHOT}: {exc}") from None
    return with_overrides(parse_bootstrap(doc, trusted=False), load_overrides())


class BootstrapFile:
    """The bootstrap in force: the operator's file, re-read when it changes, or the snapshot.

    The file's (mtime, size) is looked at no more than every ``CHECK_EVERY_S``. A bad file at
    start stops the service (``ValueError``); a bad or missing copy later is logged and the
    last good bootstrap stays in force.
    """

    def __init__(
        self, value: str | os.PathLike[str] | None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        # Inline JSON is read once; a file is watched for changes.
        self._path = None if value is None or is_inline_json(value) else Path(value)
        self._clock = clock
        self._stamp = _stamp(self._path)
        self._checked = clock()
        self._set(load_bootstrap(value))

    def current(self) -> Bootstrap:
        self._refresh()
        return self._bootstrap

    def trusted_origins(self) -> frozenset[tuple[str, str, int]]:
        self._refresh()
        return self._trusted

    def _set(self, bootstrap: Bootstrap) -> None:
        self._bootstrap = bootstrap
        self._trusted = bootstrap.trusted_origins()

    def _refresh(self) -> None:
        if self._path is None or self._clock() - self._checked < CHECK_EVERY_S:
            return
        self._checked = self._clock()
        stamp = _stamp(self._path)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self._set(load_bootstrap(str(self._path)))
        except ValueError as exc:
            log.warning("keeping the last good RDAP bootstrap: %s", exc)
            return
        log.info("RDAP bootstrap reloaded: %d TLDs", len(self._bootstrap.services))


def _stamp(path: Path | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size
