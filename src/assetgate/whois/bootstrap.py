"""The IANA RDAP bootstrap for DNS (RFC 9224): which RDAP server answers for a TLD.

A snapshot ships in the package (``data/rdap_dns.json``) so the service works and its tests run
with no network; ``ASSETGATE_RDAP_BOOTSTRAP`` names a file that replaces it (for example a fresh
copy of IANA's ``dns.json``, refreshed by cron). Servers listed in the operator's file are
trusted like those of ``ASSETGATE_WHOIS_SERVERS``; the shipped snapshot's are not (they go
through the SSRF guard like any other public server).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

SNAPSHOT: Final = "rdap_dns.json"


@dataclass(frozen=True, slots=True)
class Bootstrap:
    services: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    trusted: bool = False
    publication: str = ""

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
        return frozenset(origin(url) for urls in self.services.values() for url in urls)


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


def load_bootstrap(path: Path | None) -> Bootstrap:
    """The operator's file when given, else the shipped snapshot."""
    try:
        if path is None:
            text = resources.files("assetgate.whois").joinpath("data", SNAPSHOT).read_text("utf-8")
        else:
            text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ValueError(f"RDAP bootstrap {path or SNAPSHOT}: {exc}") from None
    return parse_bootstrap(doc, trusted=path is not None)
