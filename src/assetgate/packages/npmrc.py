"""An ``.npmrc`` (``ASSETGATE_NPMRC``) -> the registries and credentials it names (pure).

The file a team already has, in npm's syntax: ``registry=<url>`` (the default registry),
``@scope:registry=<url>`` (a scope's own registry) and credentials keyed by a registry's
"nerf dart" (``//host[:port]/path/``): ``:_authToken`` (a bearer token), ``:_auth`` (base64
``user:password``) or ``:username`` with ``:_password`` (base64 password). ``${NAME}`` is replaced
by the environment's value (``${NAME?}``: empty when unset; ``\\${NAME}`` stays literal), as npm
does, except that an unset ``${NAME}`` stops the start naming the variable, where npm would send
the literal text as a token. Every other key is ignored.

A credential never appears in a ``repr``, an error or a log line: ``Credential.header`` is left
out of its ``repr`` and errors name the line and key, never the value.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

SCOPE: Final = re.compile(r"@[a-z0-9~-][a-z0-9._~-]*")
ENV_REFERENCE: Final = re.compile(r"(?<!\\)(\\*)\$\{([^${}?]+)(\?)?\}")
AUTH_KEYS: Final = ("_authToken", "_auth", "username", "_password")


class NpmrcError(ValueError):
    """What is wrong with the file, by line and key (never a value: it may be a secret)."""


@dataclass(frozen=True, slots=True)
class Credential:
    """What to send to every URL under ``where`` (a nerf dart ``//host[:port]/path/``)."""

    where: str
    header: str = field(repr=False)  # the Authorization header's value: never printed


@dataclass(frozen=True, slots=True)
class Npmrc:
    registry: str | None  # ``registry=``, normalised to end in "/"
    scopes: Mapping[str, str]  # "@acme" -> its registry
    credentials: tuple[Credential, ...]


def expand_env(text: str, environ: Mapping[str, str], where: str) -> str:
    """npm's ``${NAME}`` replacement; an unset ``${NAME}`` (without ``?``) is an NpmrcError."""

    def replace(match: re.Match[str]) -> str:
        escapes, name, optional = match.group(1), match.group(2), match.group(3)
        if len(escapes) % 2:  # an odd number of backslashes: the reference is literal
            return match.group(0)[(len(escapes) + 1) // 2 :]
        value = environ.get(name)
        if value is None:
            if not optional:
                raise NpmrcError(f"{where} uses ${{{name}}}, which is not set")
            value = ""
        return escapes[len(escapes) // 2 :] + value

    return ENV_REFERENCE.sub(replace, text)


def registry_base(value: str, where: str) -> str:
    """An http(s) URL with a host, no credentials, no query -> itself ending in "/"."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NpmrcError(f"{where}: expected an http(s) URL with a host")
    if parts.username is not None or parts.password is not None:
        raise NpmrcError(f"{where}: credentials belong in a //host/:_authToken line, not the URL")
    if parts.query or parts.fragment:
        raise NpmrcError(f"{where}: a registry URL has no query or fragment")
    return value if value.endswith("/") else value + "/"


def nerf_dart(url: str) -> str:
    """``https://Host:443/a/b?x`` -> ``//host/a/b`` (npm's key for a URL's credentials): the
    scheme, default port, query and fragment dropped."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    default = 443 if parts.scheme == "https" else 80
    port = f":{parts.port}" if parts.port is not None and parts.port != default else ""
    return f"//{host}{port}{parts.path or '/'}"


def _dart_key(dart: str) -> str:
    """``//Host:4873/Path`` -> ``//host:4873/Path/``: the host is case-insensitive, a path not."""
    host, _, path = dart[2:].partition("/")
    path = path if not path or path.endswith("/") else path + "/"
    return f"//{host.lower()}/{path}"


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _basic(user: str, password_b64: str, where: str) -> str:
    try:
        password = base64.b64decode(password_b64, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise NpmrcError(f"{where}: _password is not base64") from None
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _credential(where: str, keys: Mapping[str, str], line: str) -> Credential | None:
    if token := keys.get("_authToken"):
        return Credential(where, f"Bearer {token}")
    if auth := keys.get("_auth"):
        return Credential(where, f"Basic {auth}")
    user, password = keys.get("username"), keys.get("_password")
    if user and password:
        return Credential(where, _basic(user, password, line))
    return None


def parse_npmrc(text: str, environ: Mapping[str, str], source: str = "ASSETGATE_NPMRC") -> Npmrc:
    """The file's text -> Npmrc; NpmrcError names ``source``, the line and the key."""
    registry: str | None = None
    scopes: dict[str, str] = {}
    auth: dict[str, dict[str, str]] = {}
    first_line: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;[" or "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        key = expand_env(key, environ, f"{source} line {number}")
        where = f"{source} line {number} ({key})"
        value = _unquote(expand_env(value, environ, where))
        if key == "registry":
            registry = registry_base(value, where)
        elif key.endswith(":registry") and not key.startswith("//"):
            scope = key.removesuffix(":registry").lower()
            if not SCOPE.fullmatch(scope):
                raise NpmrcError(f"{where}: expected @scope:registry=<url>")
            scopes[scope] = registry_base(value, where)
        elif key.startswith("//") and ":" in key:
            dart, _, name = key.rpartition(":")
            if name in AUTH_KEYS and value:
                dart = _dart_key(dart)
                auth.setdefault(dart, {})[name] = value
                first_line.setdefault(dart, where)
    credentials = tuple(
        found
        for dart, keys in auth.items()
        if (found := _credential(dart, keys, first_line[dart])) is not None
    )
    return Npmrc(registry, scopes, credentials)


def credential_for(credentials: tuple[Credential, ...], url: str) -> Credential | None:
    """The credential of the longest nerf dart ``url`` lies under, if any: a token is only ever
    sent to the host, port and path it was written for."""
    dart = nerf_dart(url)
    found = [c for c in credentials if dart.startswith(c.where)]
    return max(found, key=lambda c: len(c.where)) if found else None
