"""The redactor's encoded forms, property-based: a secret embedded anywhere in a longer
byte stream, encoded whole (base64 either alphabet, padded or not, wrapped at any width;
hex either case, wrapped), is caught; so is the live view's, however the output is
chunked. tests/security/test_secrets_leaving.py drives the same through the command."""

from __future__ import annotations

import base64

from agentcli_tools.redacted_stream import RedactedStream
from agentcli_tools.redaction import Redactor
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.leaks import exposed, shown_in_chunks

secret_values = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=8, max_size=48
)
around = st.binary(max_size=200)


def _wrap(text: str, width: int) -> str:
    if width == 0:
        return text
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def _encoded(data: bytes, how: str, width: int) -> str:
    if how == "hex":
        return _wrap(data.hex(), width)
    if how == "HEX":
        return _wrap(data.hex().upper(), width)
    encoded = (base64.urlsafe_b64encode if how == "base64url" else base64.b64encode)(data)
    return _wrap(encoded.decode(), width)


@settings(max_examples=300, deadline=None)
@given(
    secret=secret_values,
    before=around,
    after=around,
    how=st.sampled_from(["base64", "base64url", "hex", "HEX"]),
    width=st.sampled_from([0, 1, 7, 60, 64, 76]),
    padding=st.booleans(),
)
def test_an_encoded_secret_in_a_longer_stream_is_caught(
    secret: str, before: bytes, after: bytes, how: str, width: int, padding: bool
) -> None:
    redactor = Redactor({"SOME_TOKEN": secret})
    text = _encoded(before + secret.encode() + after, how, width)
    text = text if padding else text.replace("=", "")
    shown = redactor(text)
    assert exposed(shown, [secret]) == []
    assert "[redacted SOME_TOKEN as " in shown


@settings(max_examples=150, deadline=None)
@given(
    secret=secret_values,
    before=around,
    how=st.sampled_from(["base64", "hex"]),
    width=st.sampled_from([0, 7, 76]),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=8),
)
def test_the_live_view_catches_an_encoded_secret_however_it_is_chunked(
    secret: str, before: bytes, how: str, width: int, cuts: list[int]
) -> None:
    redactor = Redactor({"SOME_TOKEN": secret})
    data = _encoded(before + secret.encode(), how, width).encode()
    joined = shown_in_chunks(RedactedStream, redactor, data, cuts)
    assert joined == redactor(data.decode())
    assert exposed(joined, [secret]) == []


def test_unrelated_text_is_left_as_it_is() -> None:
    redactor = Redactor({"SOME_TOKEN": "sk-test-Zq8vW3kP1xN7mR4tY6uB9cE2"})
    text = "a plain line\n" + base64.b64encode(b"other data " * 20).decode() + "\ncafe 0123abcd\n"
    assert redactor(text) == text
