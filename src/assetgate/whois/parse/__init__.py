"""Whois text -> ``Parsed``: pick the format by TLD, else by sniffing, then classify (pure).

One parser per format family; each fills a ``Builder`` and never raises. An answer with no
domain data is classified (not found / quota banner / unsupported) instead of being reported as
an empty record; an answer that is neither gets the ``unparsed_format`` warning. A registered
record gets a ``missing:<field>`` warning for each field its registry publishes (``published``)
that the parser did not find, so an incomplete parse is visible.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from assetgate.whois.parse.classify import Verdict, classify
from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.denic import parse_denic
from assetgate.whois.parse.dotted import parse_dotted
from assetgate.whois.parse.eurid import parse_eurid
from assetgate.whois.parse.fred import SNIFF as FRED_SNIFF
from assetgate.whois.parse.fred import parse_fred
from assetgate.whois.parse.iana import parse_iana
from assetgate.whois.parse.icann import parse_icann
from assetgate.whois.parse.isocil import parse_isocil
from assetgate.whois.parse.jprs import parse_jprs
from assetgate.whois.parse.nask import parse_nask
from assetgate.whois.parse.nicar import parse_nicar
from assetgate.whois.parse.nicit import parse_nicit
from assetgate.whois.parse.nicve import parse_nicve
from assetgate.whois.parse.nominet import parse_nominet
from assetgate.whois.parse.norid import parse_norid
from assetgate.whois.parse.published import PUBLISHED
from assetgate.whois.parse.punktum import parse_punktum
from assetgate.whois.parse.registrobr import parse_registrobr
from assetgate.whois.parse.rpsl import parse_arnes, parse_iedr, parse_iis, parse_irnic, parse_rpsl
from assetgate.whois.parse.sectioned import parse_sectioned
from assetgate.whois.parse.sknic import parse_sknic
from assetgate.whois.parse.switch import parse_switch
from assetgate.whois.parse.uaepp import parse_uaepp
from assetgate.whois.record import (
    RATE_LIMITED_UPSTREAM,
    UNPARSED_FORMAT,
    UNSUPPORTED,
    Parsed,
    missing,
)

Parser = Callable[[str], Builder]

PARSERS: Final[dict[str, Parser]] = {
    "icann": parse_icann,
    "jprs": parse_jprs,
    "iana": parse_iana,
    "denic": parse_denic,
    "nominet": parse_nominet,
    "rpsl": parse_rpsl,
    "registrobr": parse_registrobr,
    "eurid": parse_eurid,
    "dotted": parse_dotted,
    "sectioned": parse_sectioned,
    "norid": parse_norid,
    "iedr": parse_iedr,
    "irnic": parse_irnic,
    "nask": parse_nask,
    "uaepp": parse_uaepp,
    "nicve": parse_nicve,
    "isocil": parse_isocil,
    "sknic": parse_sknic,
    "punktum": parse_punktum,
    "iis": parse_iis,
    "nicar": parse_nicar,
    "nicit": parse_nicit,
    "switch": parse_switch,
    "fred": parse_fred,
    "arnes": parse_arnes,
}
FORMAT_BY_TLD: Final = {
    "jp": "jprs",
    "int": "iana",
    "arpa": "iana",
    "de": "denic",
    "uk": "nominet",
    "br": "registrobr",
    "eu": "eurid",
    "xn--e1a4c": "eurid",
    "xn--qxa6a": "eurid",
    "fi": "dotted",
    "ax": "dotted",
    "kz": "dotted",
    "no": "norid",
    "ie": "iedr",
    "ir": "irnic",
    "pl": "nask",
    "ua": "uaepp",
    "ve": "fred",
    "cr": "fred",
    "si": "arnes",
    "il": "isocil",
    "sk": "sknic",
    "dk": "punktum",
    "ar": "nicar",
    "it": "nicit",
    "ch": "switch",
    "li": "switch",
    **dict.fromkeys(("fr", "re", "pm", "tf", "wf", "yt", "ru", "su", "ee"), "rpsl"),
    "cz": "fred",
    "is": "rpsl",
    **dict.fromkeys(("nu", "se"), "iis"),
    **dict.fromkeys(("nl", "aw", "be", "gg", "je", "tk", "ml", "ga", "cf", "gq"), "sectioned"),
}
_SNIFF: Final = (
    ("jprs", re.compile(r"^\s*(?:[a-z]\.\s*)?\[(?:Domain Name|ドメイン名)\]", re.MULTILINE)),
    ("norid", re.compile(r"^NORID Handle\.+:", re.MULTILINE)),
    ("iana", re.compile(r"^source:\s+IANA\s*$", re.MULTILINE)),
    ("uaepp", re.compile(r"^source:\s+UAEPP\s*$", re.MULTILINE)),
    ("fred", FRED_SNIFF),
    ("dotted", re.compile(r"^[A-Za-z][\w ]*\.{4,}\s*:", re.MULTILINE)),
    ("nominet", re.compile(r"^\s+Domain name:\s*\n\s+\S", re.MULTILINE)),
    ("rpsl", re.compile(r"^(?:nic-hdl|nic-hdl-br|holder-c|nsset|ns-list|contact):", re.MULTILINE)),
)


def sniff_format(text: str) -> str:
    for name, pattern in _SNIFF:
        if pattern.search(text):
            return name
    return "icann"


# A registry that changed layout: the current one when the answer looks like it, else the older.
OLDER_LAYOUT: Final = {"ve": ("fred", FRED_SNIFF, "nicve")}


def format_for(tld: str | None, text: str) -> str:
    older = OLDER_LAYOUT.get(tld or "")
    if older is not None:
        current, looks_like, previous = older
        return current if looks_like.search(text) else previous
    return FORMAT_BY_TLD.get(tld or "", "") or sniff_format(text)


def parse_whois(text: str, tld: str | None = None) -> Parsed:
    """Parse one port-43 answer; ``tld`` is given for a registry answer, not a registrar's."""
    builder = PARSERS[format_for(tld, text)](text)
    verdict: Verdict | None = None
    if not builder.freeze().has_data():
        verdict = classify(text)
        if verdict == "not_found":
            builder.not_found = True
        elif verdict == "rate_limited":
            builder.warn(RATE_LIMITED_UPSTREAM)
        elif verdict == "unsupported":
            builder.warn(UNSUPPORTED)
    parsed = builder.freeze()
    if parsed.registered is None and verdict is None:
        parsed = replace(parsed, warnings=(*parsed.warnings, UNPARSED_FORMAT))
    published = PUBLISHED.get(tld or "", ())
    absent = missing(parsed, tuple(p for p in published if p not in builder.stated_absent))
    return replace(parsed, warnings=(*parsed.warnings, *absent)) if absent else parsed
