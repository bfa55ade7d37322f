"""Stored values compressed (threads/compression.py): read back exactly, in a fixed format."""

from __future__ import annotations

import sqlite3
import zlib

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agentcli.policy.approval_policy import Policy
from agentcli.threads.compression import FRAMING, PLAIN, ZLIB, Zlib
from agentcli.threads.langgraph_internals import checkpoint_serializer
from tests.helpers.fakes import call, say
from tests.helpers.stored import data_bytes, stored_values

# the stored format: values written with this dictionary read only with it
FRAMING_ADLER32 = 0x920157D2


def test_values_read_back_exactly_and_small_ones_stay_plain() -> None:
    serde = checkpoint_serializer()
    answer = AIMessage("An answer of some length, " * 40, id="a1")
    for value in (0, "x", [HumanMessage("hi", id="h1")], [answer], {"audit": [{"tool": "t"}]}):
        stored = serde.dumps_typed(value)
        assert serde.loads_typed(stored) == value
    assert serde.dumps_typed(0)[0] == f"msgpack+{PLAIN}"
    kind, data = serde.dumps_typed([answer])
    assert kind == f"msgpack+{ZLIB}" and len(data) < len(
        JsonPlusSerializer().dumps_typed([answer])[1]
    )


def test_values_saved_before_compression_still_read() -> None:
    old = JsonPlusSerializer().dumps_typed([HumanMessage("saved before", id="h1")])
    assert old[0] == "msgpack"
    assert checkpoint_serializer().loads_typed(old) == [HumanMessage("saved before", id="h1")]


def test_the_dictionary_is_the_one_values_were_written_with() -> None:
    assert zlib.adler32(FRAMING) == FRAMING_ADLER32, "a new dictionary needs a new name"
    other = zlib.compressobj(6, zdict=b"another dictionary " * 10)
    packed = other.compress(b"a value " * 100) + other.flush()
    with pytest.raises(zlib.error):
        Zlib().decrypt(ZLIB, packed)


def test_an_unknown_encoding_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        Zlib().decrypt("zstd", b"whatever")


def test_the_tests_read_of_the_data_folder_sees_into_compressed_values(make, tmp_path) -> None:
    # the secrets tests look for a secret in tests.helpers.stored.data_bytes: it must see
    # what a tool call and its result stored, which are compressed, and in no plain table
    marker = "tool-argument-3f9c1e"
    s = make([call(("note", {"text": marker * 8})), say("done")], Policy.build(allow=["note"]))
    assert list(s.send("go"))[-1].status == "done"
    s.store.close()
    values = stored_values(tmp_path / "threads.db")
    assert any(marker.encode() in value for value in values)
    assert marker.encode() in data_bytes(tmp_path)
    with sqlite3.connect(tmp_path / "threads.db") as conn:
        kinds = {row[0] for row in conn.execute("SELECT type FROM writes")}
    assert f"msgpack+{ZLIB}" in kinds  # so the marker was read out of compressed values
