"""The SigV4 signer (admin/sigv4.py) against AWS's published example signatures."""

from __future__ import annotations

from datetime import UTC, datetime

from assetgate.admin.sigv4 import sign, signing_key

SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"  # AWS's documentation example key
WHEN = datetime(2015, 8, 30, 12, 36, tzinfo=UTC)


def test_the_signing_key_of_the_documented_example() -> None:
    key = signing_key(SECRET, "20150830", "us-east-1", "iam")
    assert key.hex() == "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"


def test_the_documented_iam_list_users_request() -> None:
    headers = sign(
        "GET",
        "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
        {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
        b"",
        access_key="AKIDEXAMPLE",
        secret_key=SECRET,
        region="us-east-1",
        service="iam",
        now=WHEN,
    )
    assert headers["X-Amz-Date"] == "20150830T123600Z"
    assert headers["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    )


def test_the_test_suites_get_vanilla() -> None:
    headers = sign(
        "GET",
        "https://example.amazonaws.com/",
        {},
        b"",
        access_key="AKIDEXAMPLE",
        secret_key=SECRET,
        region="us-east-1",
        service="service",
        now=WHEN,
    )
    assert headers["Authorization"].endswith(
        "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    )


def test_a_session_token_is_sent_and_signed() -> None:
    headers = sign(
        "POST",
        "https://cloudfront.amazonaws.com/2020-05-31/distribution/D/invalidation",
        {"Content-Type": "application/xml"},
        b"<x/>",
        access_key="AKIDEXAMPLE",
        secret_key=SECRET,
        region="us-east-1",
        service="cloudfront",
        now=WHEN,
        session_token="session",
    )
    assert headers["X-Amz-Security-Token"] == "session"
    assert (
        "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,"
        in (headers["Authorization"])
    )
