"""What a setting's value may be: the types the fields use, each with the check that refuses a
bad value at start, naming the variable (pydantic puts the field's name on the error and
``cli/settings_errors.py`` turns it into ``ASSETGATE_NAME: why``).

Pure functions from text to values; the only I/O is reading the file a JSON setting names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import limits
from pydantic import AfterValidator, BeforeValidator, SecretStr
from pydantic_settings import NoDecode

MIN_SIGNING_KEY_LENGTH = 32
MIN_ADMIN_TOKEN_LENGTH = 24


def _text_or_none(value: object) -> object:
    """A path object as text; empty text as unset (``ASSETGATE_WHOIS_SERVERS=``)."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, str) and not value.strip():
        return None
    return value


def is_inline_json(value: str | os.PathLike[str]) -> bool:
    return isinstance(value, str) and value.lstrip().startswith(("{", "["))


def json_text(value: str | os.PathLike[str]) -> str:
    """The JSON a setting holds: the value itself when inline, else the text of the file it
    names; ValueError naming the whole path (never only its last part) when that cannot be read."""
    if isinstance(value, str) and is_inline_json(value):
        return value
    path = Path(value).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise ValueError(f"cannot read {path}: not UTF-8 text") from None


def json_value(value: str | os.PathLike[str]) -> object:
    """``json_text`` parsed; ValueError saying where the JSON is broken."""
    text = json_text(value)
    try:
        return json.loads(text)
    except ValueError as exc:
        where = "" if is_inline_json(value) else f"{Path(value).expanduser()}: "
        raise ValueError(f"{where}not JSON ({exc})") from None


def _readable_json(value: str | None) -> str | None:
    """Readable and JSON, checked here; what the JSON means is checked by its part at start."""
    if value is not None:
        json_value(value)
    return value


#: A JSON setting: the JSON itself (text starting with ``{`` or ``[``) or the path of a file
#: holding it; ``json_text`` reads either.
JsonSetting = Annotated[
    str | None, BeforeValidator(_text_or_none), NoDecode, AfterValidator(_readable_json)
]


def split_csv(value: object) -> object:
    """Lists come from the environment as ``a,b,c``, not JSON."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


CommaList = Annotated[list[str], NoDecode, BeforeValidator(split_csv)]


def _widths(value: list[int]) -> list[int]:
    if any(not 1 <= width <= 50_000 for width in value):
        raise ValueError("expected widths within 1..50000")
    return sorted(set(value))


Widths = Annotated[list[int], NoDecode, BeforeValidator(split_csv), AfterValidator(_widths)]


def _one_of(allowed: tuple[str, ...], repeated: str | None) -> Callable[[object], object]:
    """A comma list of names out of ``allowed``, lowercased; a repeat is dropped, or refused
    naming it as ``repeated`` when given."""
    expected = " and ".join(allowed)

    def check(value: object) -> object:
        value = split_csv(value)
        if not isinstance(value, list):
            return value
        names = [str(name).lower() for name in value]
        if any(name not in allowed for name in names):
            raise ValueError(f"expected a comma-separated list of {expected}")
        if repeated is not None and len(set(names)) != len(names):
            raise ValueError(f"a {repeated} is listed twice")
        return list(dict.fromkeys(names))

    return check


#: ``avif,webp``: the formats ``Accept`` may pick, best first (only these two, once each).
AutoFormats = Annotated[list[str], NoDecode, BeforeValidator(_one_of(("avif", "webp"), "format"))]
#: ``cache-tag,surrogate-key`` (either, both, or empty for none).
TagHeaders = Annotated[
    list[str], NoDecode, BeforeValidator(_one_of(("cache-tag", "surrogate-key"), None))
]


def _long_keys(value: list[str]) -> list[str]:
    """A short key is guessable; refused at start rather than trusted."""
    for index, key in enumerate(value, start=1):
        if len(key) < MIN_SIGNING_KEY_LENGTH:
            raise ValueError(f"key {index} is shorter than {MIN_SIGNING_KEY_LENGTH} characters")
    return value


SigningKeys = Annotated[CommaList, AfterValidator(_long_keys)]


def _secret_of(length: int) -> Callable[[SecretStr | None], SecretStr | None]:
    """An empty secret is none; a short one is guessable and refused at start."""

    def check(value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        if length and len(value.get_secret_value()) < length:
            raise ValueError(f"shorter than {length} characters")
        return value

    return check


#: A bearer secret clients send (``ASSETGATE_PACKAGES_TOKEN``): at least 32 characters.
LongSecret = Annotated[SecretStr | None, AfterValidator(_secret_of(MIN_SIGNING_KEY_LENGTH))]
#: The operator's purge token: at least 24 characters.
AdminSecret = Annotated[SecretStr | None, AfterValidator(_secret_of(MIN_ADMIN_TOKEN_LENGTH))]
#: A third party's API token (CDNs): its length is theirs to decide.
ApiSecret = Annotated[SecretStr | None, AfterValidator(_secret_of(0))]


def check_source_url(value: str) -> str:
    """A source other than a directory: ``s3://bucket[/prefix]`` or ``http(s)://host[:port][/p]``.

    Refused here, at start, naming the variable: credentials in the URL (they would end up in
    logs), a query or fragment (nothing to map a path onto), a missing bucket or host."""
    parts = urlsplit(value)
    if parts.scheme not in ("s3", "http", "https") or not parts.hostname:
        raise ValueError("expected a directory, s3://bucket[/prefix] or http(s)://host[/prefix]")
    if parts.username is not None or parts.password is not None:
        raise ValueError("credentials do not belong in a source URL (use the AWS variables)")
    if parts.query or parts.fragment:
        raise ValueError("a source URL has no query or fragment")
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise ValueError("the port is not a number within 0..65535") from None
    return value


def _root_or_url(value: object) -> object:
    """A URL (``s3://``, ``http(s)://``) stays text: ``Path`` would fold its ``//``."""
    if isinstance(value, str) and "://" in value:
        return check_source_url(value)
    if isinstance(value, str):
        return Path(value)
    return value


Root = Annotated[Path | str, NoDecode, BeforeValidator(_root_or_url)]


def _mounts(value: object) -> object:
    """``{"prefix/": "s3://bucket/prefix", "": "/srv/images"}``, inline or in a file."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = json_value(value) if value.strip() else {}
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object of path prefix -> source")
    return {
        str(prefix): url if "://" not in str(url) else check_source_url(str(url))
        for prefix, url in value.items()
    }


Mounts = Annotated[dict[str, str], NoDecode, BeforeValidator(_mounts)]


def _store_url(value: str | None) -> str | None:
    if value is not None and not value.startswith("s3://"):
        raise ValueError("expected s3://bucket[/prefix]")
    return None if value is None else check_source_url(value)


BucketUrl = Annotated[str | None, AfterValidator(_store_url)]


def _api_base(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("expected http(s)://host[:port][/path]")
    if parts.username is not None or parts.password is not None or parts.query:
        raise ValueError("an API base carries no credentials and no query")
    return value.rstrip("/")


#: A third party's API base URL; empty is none, a trailing ``/`` is dropped.
ApiBase = Annotated[str | None, AfterValidator(_api_base)]


def _public_url(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("expected http(s)://host[:port][/path]")
    if parts.username is not None or parts.password is not None:
        raise ValueError("a public URL carries no credentials")
    if parts.query or parts.fragment:
        raise ValueError("a public URL has no query or fragment")
    return value.rstrip("/")


PublicUrl = Annotated[str | None, AfterValidator(_public_url)]


def _rate(value: str) -> str:
    """Checked here so a typo stops the server at start, naming the variable."""
    try:
        limits.parse(value)
    except ValueError:
        raise ValueError("expected a rate in limits notation such as '100/10 seconds'") from None
    return value


Rate = Annotated[str, AfterValidator(_rate)]


def _existing_directory(value: Path | None) -> Path | None:
    """Checked here so a wrong path stops the server at start, not every upload with a 500."""
    if value is not None and not value.is_dir():
        raise ValueError("expected an existing directory")
    return value


ExistingDirectory = Annotated[Path | None, AfterValidator(_existing_directory)]


def store_key_problem(key: str | None, store: str | None) -> str | None:
    """Without a key an entry forged by anyone who can write the bucket is served as a hit."""
    if key is None and store is not None:
        return (
            "required when ASSETGATE_RESULT_STORE is set: a secret of at least "
            f"{MIN_SIGNING_KEY_LENGTH} characters every node shares"
        )
    if key is not None and len(key) < MIN_SIGNING_KEY_LENGTH:
        return f"shorter than {MIN_SIGNING_KEY_LENGTH} characters"
    return None
