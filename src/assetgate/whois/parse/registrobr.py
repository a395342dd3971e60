"""registro.br (.br): RPSL-like, ISO-8859-1 on the wire (pure).

``owner:`` is the holder's name on the domain object itself; ``ownerid:`` is a CNPJ
(``00.000.000/0001-00``, a company) or a CPF (a person), which decides whether that name is an
organisation. Dates are ``YYYYMMDD`` with a trailing ``#ticket``; contacts are ``nic-hdl-br``
objects referenced by ``owner-c``/``tech-c``; ``status: published`` is the live state.
"""

from __future__ import annotations

from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.rpsl import parse_blocks, split_blocks


def parse_registrobr(text: str) -> Builder:
    blocks = split_blocks(text)
    owner_id = next((v for b in blocks for k, v in b if k in ("ownerid", "owner-id")), "")
    if "/" in owner_id:  # a CNPJ: the owner is a company
        blocks = [[("org" if k == "owner" else k, v) for k, v in b] for b in blocks]
    return parse_blocks(blocks)
