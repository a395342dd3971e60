"""What may be served: ``ASSETGATE_PACKAGES_ALLOW``/``_DENY`` and the client token of guarded names.

Globs (``fnmatch``: ``*``, ``?``, ``[…]``) match a whole package or library name, so ``react``
admits ``react`` and not ``react-dom``, and ``@acme/*`` every package of the scope. A name is
refused when a deny glob matches it, or when there is an allow-list and no allow glob does; the
refusal is a 404 naming the setting. A name under ``ASSETGATE_PACKAGES_TOKEN_SCOPES`` (by default
the scopes with a registry of their own in ``ASSETGATE_NPMRC``; none: every name) is served only
to a request with ``Authorization: Bearer <ASSETGATE_PACKAGES_TOKEN>``, and its answers are
``Cache-Control: private``: a shared cache in front never hands them to someone else.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from assetgate.errors import AppError

REALM: Final = 'Bearer realm="assetgate packages"'


@dataclass(frozen=True, slots=True)
class ServePolicy:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    guarded: tuple[str, ...] = ()  # names that need the client token (when there is one)
    token: str | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        allow: Iterable[str],
        deny: Iterable[str],
        token: str | None,
        guarded: Iterable[str],
        private_scopes: Iterable[str],
    ) -> ServePolicy:
        globs = tuple(guarded) or tuple(f"{scope}/*" for scope in sorted(private_scopes))
        return cls(tuple(allow), tuple(deny), globs or ("*",), token or None)

    def refusal(self, name: str) -> str | None:
        """The setting that keeps ``name`` from being served, or None."""
        if any(fnmatch.fnmatchcase(name, glob) for glob in self.deny):
            return "ASSETGATE_PACKAGES_DENY"
        if self.allow and not any(fnmatch.fnmatchcase(name, glob) for glob in self.allow):
            return "ASSETGATE_PACKAGES_ALLOW"
        return None

    def admits(self, name: str) -> bool:
        return self.refusal(name) is None

    def check(self, name: str) -> None:
        """AppError 404 naming the setting when ``name`` may not be served."""
        setting = self.refusal(name)
        if setting is not None:
            raise AppError.not_found(f"{name} is not served here ({setting})")

    def guards(self, name: str) -> bool:
        return self.token is not None and any(
            fnmatch.fnmatchcase(name, glob) for glob in self.guarded
        )

    def authorized(self, headers: Mapping[str, str]) -> bool:
        """The request carries the client token (compared in constant time)."""
        if self.token is None:
            return True
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())

    def check_client(self, name: str, headers: Mapping[str, str]) -> bool:
        """Whether ``name`` is guarded (its answer must be private); AppError 401 when it is and
        the request lacks the token."""
        if not self.guards(name):
            return False
        if not self.authorized(headers):
            raise AppError(
                401,
                f"{name} requires a bearer token (ASSETGATE_PACKAGES_TOKEN)",
                headers={"WWW-Authenticate": REALM, "Cache-Control": "no-store"},
            )
        return True

    def fingerprint(self) -> str:
        """What the allow and deny lists are, for cache keys of answers filtered by them."""
        lists = "\0".join(("\1".join(self.allow), "\1".join(self.deny)))
        return hashlib.sha256(lists.encode()).hexdigest()[:16] if lists != "\0" else "all"


#: Everything may be served, by anyone (no setting given).
OPEN: Final = ServePolicy()
