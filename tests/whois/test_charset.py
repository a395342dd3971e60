"""Answers are decoded whole, in the registry's charset."""

from __future__ import annotations

import pytest

from assetgate.whois.charset import JAPANESE, LATIN1, decode

JAPANESE_TEXT = "[登録者名]  株式会社エグザンプル\n[住所]  東京都千代田区\n"


@pytest.mark.parametrize("charset", ["iso-2022-jp", "euc-jp", "shift_jis", "utf-8"])
def test_japanese_charsets(charset: str) -> None:
    text, used = decode(JAPANESE_TEXT.encode(charset), JAPANESE)
    assert (text, used) == (JAPANESE_TEXT, charset)


def test_iso_2022_jp_is_recognised_without_hints() -> None:
    assert decode(JAPANESE_TEXT.encode("iso-2022-jp"))[1] == "iso-2022-jp"


def test_latin1() -> None:
    data = "owner: Exemplo Comunicação Ltda\n".encode("iso-8859-1")
    assert decode(data, LATIN1) == ("owner: Exemplo Comunicação Ltda\n", "iso-8859-1")
    assert decode(data)[0] == "owner: Exemplo Comunicação Ltda\n"  # last resort


def test_latin1_is_not_taken_for_shift_jis_without_a_hint() -> None:
    assert decode("São Paulo".encode("iso-8859-1"))[0] == "São Paulo"


def test_line_ends_and_control_characters() -> None:
    text, _ = decode(b"a: 1\r\nb: \x1b[31mred\x07\r\nc\rd\x00\n")
    assert text == "a: 1\nb: [31mred\nc\nd\n"
