"""The generic ``Key: Value`` parser: ICANN RDDS output and the many registries that copy it.

Covers every gTLD registry and registrar answer (ICANN Registration Data Directory Services
Consistent Labeling and Display Policy, 2017) and ccTLDs with the same labels (.ai, .co, .us,
.me, .cc, .in …), plus the common older spellings (``Sponsoring Registrar``, ``Expiration
Date``, ``nserver``, ``paid-till``). Unknown keys are ignored; nothing here raises.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.common import Builder, key_values
from assetgate.whois.record import SIGNED

DOMAIN_KEYS: Final = frozenset({"domain name", "domain", "domainname", "domain_name"})
REGISTRAR_KEYS: Final = {
    "registrar": "name",
    "sponsoring registrar": "name",
    "registrar name": "name",
    "registrar organization": "name",
    "current registrar": "name",
    "registrar iana id": "iana_id",
    "sponsoring registrar iana id": "iana_id",
    "registrar url": "url",
    "registrar-url": "url",
    "referral url": "url",
    "registrar website": "url",
    "registrar abuse contact email": "abuse_email",
    "abuse contact email": "abuse_email",
    "registrar abuse contact phone": "abuse_phone",
    "registrar abuse email": "abuse_email",  # UARNet (lviv.ua …), relayed by whois.ua
    "registrar abuse phone": "abuse_phone",
    "abuse contact phone": "abuse_phone",
}
REFERRAL_KEYS: Final = frozenset(
    {"registrar whois server", "whois server", "referralserver", "refer", "whois"}
)
DATE_KEYS: Final = {
    "creation date": "created",
    "created date": "created",
    "created": "created",
    "created on": "created",
    "registered on": "created",
    "registered": "created",
    "registration date": "created",
    "registration time": "created",
    "domain registration date": "created",
    "domain create date": "created",
    "updated date": "updated",
    "updated": "updated",
    "last updated": "updated",
    "last updated on": "updated",
    "last update": "updated",
    "last modified": "updated",
    "modified": "updated",
    "changed": "updated",
    "domain last updated date": "updated",
    "registry expiry date": "expires",
    "expiration time": "expires",
    "registry expiration date": "expires",
    "registrar registration expiration date": "expires",
    "expiration date": "expires",
    "expiry date": "expires",
    "expires on": "expires",
    "expires": "expires",
    "expire": "expires",
    "paid-till": "expires",
    "renewal date": "expires",
    "domain expiration date": "expires",
}
STATUS_KEYS: Final = frozenset({"domain status", "status", "state", "registration status"})
NS_KEYS: Final = frozenset(
    {"name server", "name servers", "nameserver", "nameservers", "nserver", "host name", "dns"}
)
DNSSEC_KEYS: Final = frozenset({"dnssec", "dnssec status"})
KEY_MATERIAL_KEYS: Final = frozenset({"signing key", "dnskey", "ds record", "dnssec ds data"})
ROLE_PREFIXES: Final = (
    ("administrative contact", "admin"),
    ("technical contact", "tech"),
    ("billing contact", "billing"),
    ("registrant contact", "registrant"),
    ("administrative", "admin"),
    ("technical", "tech"),
    ("registrant", "registrant"),
    ("admin", "admin"),
    ("tech", "tech"),
    ("billing", "billing"),
    ("owner", "registrant"),
    ("holder", "registrant"),
)
CONTACT_FIELDS: Final = {
    "": "name",
    "name": "name",
    "contact name": "name",
    "organization": "organization",
    "organisation": "organization",
    "org": "organization",
    "company": "organization",
    "email": "email",
    "e-mail": "email",
    "contact email": "email",
    "phone": "phone",
    "phone number": "phone",
    "telephone": "phone",
    "street": "street",
    "street1": "street",
    "street2": "street",
    "street3": "street",
    "address": "street",
    "address1": "street",
    "address2": "street",
    "address3": "street",
    "city": "city",
    "state/province": "state",
    "state": "state",
    "province": "state",
    "postal code": "postal_code",
    "postalcode": "postal_code",
    "postcode": "postal_code",
    "zip": "postal_code",
    "zip code": "postal_code",
    "country": "country",
    "country code": "country",
    "country/economy": "country",
}


def parse_icann(text: str) -> Builder:
    builder = Builder()
    for key, value in key_values(text):
        apply_pair(builder, key, value)
    return builder


def apply_pair(builder: Builder, key: str, value: str) -> bool:
    """Map one normalised ``key`` onto the builder; ``False`` when the key is unknown."""
    if key in DOMAIN_KEYS:
        builder.set_domain(value)
    elif key in REGISTRAR_KEYS:
        builder.set_registrar(REGISTRAR_KEYS[key], value)
    elif key in REFERRAL_KEYS:
        builder.set_referral(value)
        builder.set_registrar("whois_server", value)
    elif key in DATE_KEYS:
        builder.set_date(DATE_KEYS[key], value)
    elif key in STATUS_KEYS:
        builder.add_status(value)
    elif key in NS_KEYS:
        builder.add_name_server(value)
    elif key in DNSSEC_KEYS:
        builder.set_dnssec(value)
    elif key in KEY_MATERIAL_KEYS:
        if value:  # key material published: the delegation is signed
            builder.set_dnssec(SIGNED)
    else:
        return _apply_contact(builder, key, value)
    return True


def _apply_contact(builder: Builder, key: str, value: str) -> bool:
    for prefix, role in ROLE_PREFIXES:
        if key == prefix or key.startswith(prefix + " "):
            rest = key[len(prefix) :].strip()
            target = CONTACT_FIELDS.get(rest)
            if target is None:
                return False
            builder.contact(role).set(target, value)
            return True
    return False
