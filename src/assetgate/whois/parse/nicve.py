"""NIC Venezuela (.ve): Spanish labels and contacts as free-text postal blocks (pure).

``Nombre de Dominio:``, ``Fecha de Creacion:``, ``Ultima Actualizacion:``, ``Fecha de
Vencimiento:``, ``Estatus del dominio:`` and ``Servidor(es) de Nombres de Dominio:`` followed by
``- host`` lines. Each contact (``Titular:`` is the registrant, then ``Contacto
Administrativo:``, ``Contacto Tecnico:``, ``Contacto de Cobranza:``) is a heading and the lines
under it, in a fixed order: ``Name  (handle)<TAB>e-mail``, the organisation, street lines,
``City, State  CC``, and the telephone line ``number (FAX) number``. The handle stays in
``raw``; positions, not the look of a line, say which line is the street, so a street that
starts with a house number is never read as a postal code.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.common import Builder, ContactBuilder, key_values

CONTACTS: Final = {
    "titular": "registrant",
    "contacto administrativo": "admin",
    "contacto tecnico": "tech",
    "contacto técnico": "tech",
    "contacto de cobranza": "billing",
}
DATES: Final = {
    "fecha de creacion": "created",
    "fecha de creación": "created",
    "ultima actualizacion": "updated",
    "última actualización": "updated",
    "fecha de vencimiento": "expires",
}
NS_HEADING: Final = "servidor(es) de nombres de dominio"
_FIRST_LINE: Final = re.compile(r"^(.*?)\s*\(([^)]*)\)\s*(\S+@\S+)?\s*$")
_PHONE_LINE: Final = re.compile(r"^\+?[\d][\d .-]*(?:x\d+)?(?:\s*\(FAX\).*)?$", re.IGNORECASE)
_CITY_LINE: Final = re.compile(r"^(.*?)(?:,\s*(.*?))?\s+([A-Z]{2})$")


def parse_nicve(text: str) -> Builder:
    builder = Builder()
    for key, value in key_values(text):
        if key == "nombre de dominio":
            builder.set_domain(value)
        elif key in DATES:
            builder.set_date(DATES[key], value)
        elif key == "estatus del dominio":
            builder.add_status(value)
    role: str | None = None
    lines: list[str] = []
    in_ns = False
    for raw in [*text.splitlines(), ""]:
        line = raw.strip()
        heading = line[:-1].strip().lower() if line.endswith(":") else None
        if heading in CONTACTS or not line or ":" in line:
            if role is not None and lines:
                _contact(builder.contact(role), lines)
            role, lines = (CONTACTS[heading], []) if heading in CONTACTS else (None, [])
        elif role is not None:
            lines.append(line)
        if heading == NS_HEADING:
            in_ns = True
        elif in_ns and line.startswith("- "):
            builder.add_name_server(line[2:])
        elif in_ns and line:
            in_ns = False
    return builder


def _contact(contact: ContactBuilder, lines: list[str]) -> None:
    first = _FIRST_LINE.match(lines[0])
    contact.set("name", " ".join((first[1] if first else lines[0]).split()))
    if first and first[3]:
        contact.set("email", first[3])
    rest = lines[1:]
    if rest and _PHONE_LINE.match(rest[-1]):
        contact.set("phone", rest.pop().split("(")[0].strip())
    if rest:
        contact.set("organization", rest.pop(0))
    if rest:
        place = _CITY_LINE.match(rest[-1])
        if place is not None:
            rest.pop()
            contact.set("city", place[1])
            contact.set("state", place[2])
            contact.set("country", place[3])
    for street in rest:
        contact.set("street", street)
