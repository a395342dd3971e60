"""``compress=1``: gzip with fixed header fields, so equal input gives equal bytes (stable ETags).

``mtime=0`` and no file name in the header; Python's writer already puts a constant OS byte. Level
6 is zlib's own default: on minified react-dom (775 KB) level 9 took 40% longer for 0.3% fewer
bytes, and the first request for a large file waits for it.
"""

from __future__ import annotations

import gzip
from typing import Final

GZIP_LEVEL: Final = 6


def gzip_bytes(data: bytes, *, level: int = GZIP_LEVEL) -> bytes:
    return gzip.compress(data, compresslevel=level, mtime=0)
