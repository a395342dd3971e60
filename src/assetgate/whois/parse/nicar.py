"""NIC Argentina (.ar): RPSL-like objects, each with its own dates (pure).

The answer lists the domain object (``domain:``, ``registrant:``, ``registered:``,
``changed:``, ``expire:``), then the registrant's ``contact:`` (or ``entity:``) object and the
``nserver:`` object, each with its own ``created:`` and ``changed:``. Only the domain object's
dates are the domain's: its ``registered:`` is the creation (its first ``created:`` when it has
no ``registered:``). An object that starts without a blank line before it (``contact:``,
``entity:``, ``nic-hdl:``, the first ``nserver:``) is split off, so its dates never land in the
domain object.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.blocks import Block
from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.rpsl import parse_blocks, split_blocks

OBJECT_KEYS: Final = frozenset({"contact", "entity", "nic-hdl", "nserver"})


def parse_nicar(text: str) -> Builder:
    blocks = [part for block in split_blocks(text) for part in split_objects(block)]
    return parse_blocks([registration_dates(block) for block in blocks])


def split_objects(block: Block) -> list[Block]:
    """One block per object: a new one at each object key that does not repeat the last key."""
    parts: list[Block] = []
    for position, (key, value) in enumerate(block):
        if not parts or (key in OBJECT_KEYS and block[position - 1][0] != key):
            parts.append([])
        parts[-1].append((key, value))
    return parts


def registration_dates(block: Block) -> Block:
    """In the domain object ``registered:`` is the creation; a ``created:`` beside it is dropped."""
    if not block or block[0][0] != "domain" or all(key != "registered" for key, _ in block):
        return block
    return [(key, value) for key, value in block if key != "created"]
