"""The minifier process: ``python -m assetgate.minify.child``, one job at a time over its pipes.

rjsmin and rcssmin are C code that no flag can interrupt, and rjsmin is quadratic on some inputs
(200 KB of ``/[`` costs 12 CPU-s), so they run here, where ``minify.sandbox`` can kill them at
their deadline (docs/optimizer.md, "Cost"). The protocol is framed bytes, no pickling:

- request: one byte naming the job (``TRANSFORMS``), an 8-byte big-endian length, the file;
- answer: ``o`` and the transformed bytes, or ``e`` and a UTF-8 reason the transformation was
  refused (the caller serves the original).

End of input (the server went away) ends the process.
"""

from __future__ import annotations

import struct
import sys
from typing import IO, BinaryIO, Final

from assetgate.minify.render import transform_bytes
from assetgate.minify.spec import AssetKind, AssetPlan, Transform

HEADER: Final = struct.Struct(">cQ")
TRANSFORMS: Final[dict[bytes, tuple[Transform, AssetKind]]] = {
    b"c": ("minify", "css"),
    b"j": ("minify", "js"),
    b"s": ("safe", "js"),
}
CODES: Final = {value: key for key, value in TRANSFORMS.items()}
OK: Final = b"o"
REFUSED: Final = b"e"


def read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    """``size`` bytes, or None at end of input."""
    chunks: list[bytes] = []
    left = size
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    while True:
        head = read_exactly(requests, HEADER.size)
        if head is None:
            return
        code, size = HEADER.unpack(head)
        data = read_exactly(requests, size)
        if data is None:
            return
        transform, kind = TRANSFORMS[code]
        try:
            out, status = transform_bytes(data, AssetPlan(kind, transform, "identity", False)), OK
        except Exception as exc:  # any refusal: the reason goes back, the process lives on
            out, status = f"{type(exc).__name__}: {exc}".encode(errors="replace"), REFUSED
        answers.write(HEADER.pack(status, len(out)))
        answers.write(out)
        answers.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
