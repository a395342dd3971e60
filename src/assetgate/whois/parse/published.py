"""Which fields each registry publishes over port 43, by TLD (data, pure).

A registered record missing one of these gets a ``missing:<field>`` warning: the registry
says it, so not finding it is a parser gap, not a registry's choice. TLDs not listed get no
such warning (their answers vary too much to promise a field).
"""

from __future__ import annotations

from typing import Final

_DATES: Final = ("dates.created", "dates.updated", "dates.expires")
_THIN: Final = ("registrar", *_DATES, "name_servers", "status", "dnssec")
_SIDN: Final = ("registrar", "dates.created", "dates.updated", "name_servers", "status", "dnssec")
_ISLAND: Final = ("registrar", "dates.created", "name_servers", "status", "registrant.name")
# Freenom shows a status only in the domain line (`X.TK is Active`), not always: no warning.
_FREENOM: Final = ("dates.created", "dates.expires", "name_servers", "registrant.name")
_IIS: Final = ("registrar", *_DATES, "name_servers", "status", "dnssec")

PUBLISHED: Final[dict[str, tuple[str, ...]]] = {
    "com": _THIN,
    "net": _THIN,
    "jp": ("dates.created", "dates.expires", "name_servers", "status"),
    "int": ("dates.created", "dates.updated", "name_servers", "registrant.organization"),
    "de": ("dates.updated", "name_servers", "status"),
    "uk": ("registrar", *_DATES, "name_servers", "status"),
    "nl": _SIDN,
    "aw": _SIDN,
    "be": ("registrar", "dates.created", "name_servers", "status", "dnssec"),  # Status: the state
    "no": ("registrar", "dates.created", "dates.updated", "name_servers", "dnssec"),
    "ie": ("registrar", "dates.created", "dates.expires", "name_servers", "status",
           "registrant.name"),
    "gg": _ISLAND,
    "je": _ISLAND,
    **dict.fromkeys(("tk", "ml", "ga", "cf", "gq"), _FREENOM),
    "ir": ("dates.updated", "dates.expires", "name_servers"),
    "cn": ("registrar", "dates.created", "dates.expires", "name_servers", "status", "dnssec",
           "registrant.name"),
    "is": ("dates.created", "dates.expires", "name_servers", "dnssec", "registrant.name"),
    "ar": ("registrar", *_DATES, "name_servers", "registrant.name"),
    "nu": _IIS,
    "se": _IIS,
    "pl": ("registrar", *_DATES, "name_servers", "dnssec"),
    "fi": ("registrar", *_DATES, "name_servers", "status", "dnssec", "registrant.name",
           "registrant.postal_code", "registrant.city", "registrant.country"),
    "ua": ("registrar", *_DATES, "name_servers", "status"),
    # FRED (.cz, .cr; .ve, whose older layout names no registrar): `changed:`, statuses and a
    # holder's personal name only when set.
    **dict.fromkeys(("cz", "cr"), ("registrar", "dates.created", "dates.expires", "name_servers")),
    "ve": ("dates.created", "dates.expires", "name_servers"),
    "si": ("registrar", "dates.created", "dates.expires", "name_servers"),
    "il": ("registrar", "dates.created", "dates.updated", "name_servers", "status",
           "registrant.name"),
    "sk": ("registrar", *_DATES, "name_servers", "status"),
    "dk": ("dates.created", "dates.expires", "name_servers", "status", "registrant.name"),
    "it": ("registrar", *_DATES, "name_servers", "status", "dnssec"),
    "ch": ("name_servers", "dnssec"),
    "li": ("name_servers", "dnssec"),
}  # fmt: skip
