"""A multipart/form-data body -> upload files on disk, under caps checked as the bytes arrive.

Starlette's ``request.form()`` would accept a file of any size (spooling it to disk) and only then
let us look at it. Here every byte is counted as it streams in: the request body, each file and
the number of files have a cap, and crossing one answers 413 at once, without reading the rest.
Files go straight to a temporary directory the caller owns (never whole in memory); the few
ordinary fields (``quality``, ``lossless``) are small and capped too.

The parser callbacks of ``python-multipart`` run synchronously inside ``parser.write``; they only
record what arrived, and the disk writes happen afterwards off the event loop, batched so a large
upload costs a thread hop per mebibyte rather than per network chunk. Each file is announced
(``on_upload``) as soon as its part is complete and its file closed, so the caller can start
converting it while the rest of the body is still arriving.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

import anyio
import anyio.to_thread
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from assetgate.convert.names import shown_name
from assetgate.errors import AppError

UPLOAD_FIELD: Final = "images"
# The ordinary fields we read (options of a few characters; nothing legitimate comes near the
# byte cap). Parts under any other name are counted and their bytes discarded.
OPTION_FIELDS: Final = frozenset({"quality", "lossless"})
MAX_FIELDS: Final = 32
MAX_SHOWN_NAMES: Final = 8
MAX_FIELD_BYTES: Final = 1024
# Pending file data is flushed to disk off the event loop once it reaches this size.
FLUSH_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class UploadLimits:
    max_file_bytes: int
    max_files: int
    max_body_bytes: int


@dataclass(frozen=True, slots=True)
class Upload:
    """One ``images`` part: the client's file name (untrusted text) and where its bytes are."""

    filename: str
    path: Path
    size: int
    index: int  # position among the ``images`` parts of the body


#: Called with each complete upload and the option fields received so far.
OnUpload = Callable[[Upload, Mapping[str, str]], None]


@dataclass(frozen=True, slots=True)
class Received:
    uploads: tuple[Upload, ...]
    fields: Mapping[str, str]
    names: tuple[str, ...] = ()  # every form field name that arrived, once, in order


def malformed(reason: str) -> AppError:
    return AppError(400, f"request body: {reason}")


def no_images(received: Sequence[str] | None) -> AppError:
    """Spec §7.2's 400 ("no images uploaded"), saying where the files belong and what came.

    ``received`` is the form field names that arrived, or None when the body was not multipart.
    """
    where = f'put each file in the form field "{UPLOAD_FIELD}"'
    if received is None:
        detail = f"send multipart/form-data and {where}"
    elif UPLOAD_FIELD in received:
        detail = f'the "{UPLOAD_FIELD}" parts carried no file'
    else:
        shown = ", ".join(_printable(name)[:40] for name in received[:MAX_SHOWN_NAMES])
        detail = f"{where} (fields received: {shown or 'none'})"
    return AppError(400, f"no images uploaded: {detail}", param=UPLOAD_FIELD)


def _printable(text: str) -> str:
    return "".join(char for char in text if char.isprintable())


def parse_boundary(content_type: str | None) -> bytes:
    """The boundary of a ``multipart/form-data`` Content-Type; 400 otherwise."""
    media_type, params = parse_options_header(content_type or "")
    if media_type != b"multipart/form-data":
        # Whatever else the body is, it uploaded no images (spec §7.2's 400 and its message).
        raise no_images(None)
    boundary = params.get(b"boundary", b"")
    if not boundary:
        raise malformed("multipart boundary missing")
    return boundary


def _decode(raw: bytes, charset: str) -> str:
    """Field names and file names: UTF-8 as browsers send them, else the declared charset."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode(charset, errors="replace")


@dataclass(slots=True)
class _Part:
    name: str = ""
    filename: str | None = None
    disposition: bytes = b""
    size: int = 0
    data: bytearray = field(default_factory=bytearray)
    file: BinaryIO | None = None
    upload_index: int = -1
    kept: bool = False


class _Collector:
    """The parser's callbacks: bookkeeping and caps only, no I/O."""

    def __init__(self, limits: UploadLimits, directory: Path, charset: str) -> None:
        self.limits = limits
        self.directory = directory
        self.charset = charset
        self.part = _Part()
        self.header_name = b""
        self.header_value = b""
        self.uploads: list[tuple[_Part, Path]] = []
        self.fields: dict[str, str] = {}
        self.names: dict[str, None] = {}  # insertion-ordered set of the field names seen
        self.field_count = 0
        self.pending: list[tuple[_Part, bytes]] = []
        self.pending_bytes = 0
        self.to_open: list[_Part] = []
        self.finished: list[_Part] = []
        self.ended = False

    def callbacks(self) -> dict[str, object]:
        return {
            "on_part_begin": self.on_part_begin,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
            "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value,
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
            "on_end": self.on_end,
        }

    def on_part_begin(self) -> None:
        self.part = _Part()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        if self.header_name.lower() == b"content-disposition":
            self.part.disposition = self.header_value
        self.header_name = b""
        self.header_value = b""

    def on_headers_finished(self) -> None:
        disposition, params = parse_options_header(self.part.disposition)
        if disposition != b"form-data" or b"name" not in params:
            raise malformed("a part has no Content-Disposition form-data name")
        part = self.part
        part.name = _decode(params[b"name"], self.charset)
        self.names.setdefault(part.name)
        # A part without a filename parameter is a form field, not a file: not an upload.
        if part.name == UPLOAD_FIELD and b"filename" in params:
            part.filename = _decode(params.get(b"filename", b""), self.charset)
            part.upload_index = len(self.uploads)
            if part.upload_index >= self.limits.max_files:
                raise AppError.too_large(
                    f"{UPLOAD_FIELD}: more than {self.limits.max_files} files in one request"
                )
            self.uploads.append((part, self.directory / f"upload-{part.upload_index}"))
            self.to_open.append(part)
        else:
            self.field_count += 1
            if self.field_count > MAX_FIELDS:
                raise malformed(f"more than {MAX_FIELDS} form fields")
            part.kept = part.name in OPTION_FIELDS

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        part = self.part
        chunk = data[start:end]
        part.size += len(chunk)
        if part.upload_index < 0:
            if not part.kept:
                return
            if part.size > MAX_FIELD_BYTES:
                raise malformed(
                    f"form field {shown_name(part.name)!r} exceeds {MAX_FIELD_BYTES} bytes"
                )
            part.data.extend(chunk)
            return
        if part.size > self.limits.max_file_bytes:
            raise AppError.too_large(
                f"{UPLOAD_FIELD}: file {shown_name(part.filename or '')!r} exceeds "
                f"{self.limits.max_file_bytes} bytes"
            )
        self.pending.append((part, chunk))
        self.pending_bytes += len(chunk)

    def on_part_end(self) -> None:
        part = self.part
        if part.upload_index >= 0:
            self.finished.append(part)
        if part.kept:
            self.fields.setdefault(part.name, _decode(bytes(part.data), self.charset))

    def on_end(self) -> None:
        self.ended = True

    def flush_sync(self) -> None:
        """Open newly started upload files and write the pending data (runs in a thread)."""
        for part in self.to_open:
            part.file = self.uploads[part.upload_index][1].open("xb")
        self.to_open.clear()
        for part, chunk in self.pending:
            assert part.file is not None
            part.file.write(chunk)
        self.pending.clear()
        self.pending_bytes = 0
        for part in self.finished:
            assert part.file is not None
            part.file.close()

    def take_finished(self) -> list[Upload]:
        """Uploads whose part ended and whose file ``flush_sync`` has closed."""
        done = [self.upload(part) for part in self.finished]
        self.finished.clear()
        return done

    def upload(self, part: _Part) -> Upload:
        path = self.uploads[part.upload_index][1]
        return Upload(part.filename or "", path, part.size, part.upload_index)

    def close_sync(self) -> None:
        for part, _ in self.uploads:
            if part.file is not None:
                part.file.close()


async def receive_uploads(
    chunks: AsyncIterator[bytes],
    *,
    content_type: str | None,
    content_length: str | None,
    limits: UploadLimits,
    directory: Path,
    on_upload: OnUpload | None = None,
) -> Received:
    """Stream the body into ``directory``; 400 for a malformed body, 413 past a cap."""
    boundary = parse_boundary(content_type)
    declared = (content_length or "").strip()
    if declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise AppError.too_large(f"request body exceeds {limits.max_body_bytes} bytes")
    _, ct_params = parse_options_header(content_type or "")
    charset = ct_params.get(b"charset", b"utf-8").decode("latin-1")
    try:
        charset = codecs.lookup(charset).name
    except LookupError:
        charset = "utf-8"
    collector = _Collector(limits, directory, charset)
    try:
        parser = MultipartParser(boundary, collector.callbacks())  # type: ignore[arg-type]
    except FormParserError:
        raise malformed("multipart boundary is too long") from None
    received = 0
    try:
        async for chunk in chunks:
            received += len(chunk)
            if received > limits.max_body_bytes:
                raise AppError.too_large(f"request body exceeds {limits.max_body_bytes} bytes")
            try:
                parser.write(chunk)
            except FormParserError:
                raise malformed("malformed multipart data") from None
            if collector.to_open or collector.finished or collector.pending_bytes >= FLUSH_BYTES:
                await anyio.to_thread.run_sync(collector.flush_sync)
                announce(collector, on_upload)
        try:
            parser.finalize()
        except FormParserError:
            raise malformed("malformed multipart data") from None
        if not collector.ended:
            raise malformed("multipart data ended before its closing boundary")
        await anyio.to_thread.run_sync(collector.flush_sync)
        announce(collector, on_upload)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(collector.close_sync)
    uploads = tuple(collector.upload(part) for part, _ in collector.uploads)
    return Received(uploads=uploads, fields=collector.fields, names=tuple(collector.names))


def announce(collector: _Collector, on_upload: OnUpload | None) -> None:
    for upload in collector.take_finished():
        if on_upload is not None:
            on_upload(upload, dict(collector.fields))
