"""The fixed part of a request fitted to a window (agent/context/fixed_part.py)."""

from __future__ import annotations

from typing import Any

import pytest
from agentcli_tools.registry import BUILTIN_TOOLS

from agentcli.agent.agent_graph import SYSTEM
from agentcli.agent.context import fixed_part
from agentcli.agent.context.compaction import Budget
from agentcli.agent.context.fixed_part import CORE, offer, schema_of, terse
from agentcli.agent.model.token_count import PER_MESSAGE, text_bytes, tools_bytes

PROMPT = SYSTEM.format(workspace="/home/me/project")
SCHEMAS = [schema_of(tool) for tool in BUILTIN_TOOLS.values()]
NAMES = list(BUILTIN_TOOLS)


def test_terse_keeps_the_names_types_and_required_arguments() -> None:
    for full in SCHEMAS:
        short = terse(full)["function"]
        long = full["function"]
        assert short["name"] == long["name"]
        assert long["description"].startswith(short["description"])
        assert short["description"].endswith(".") and short["description"].count(". ") == 0
        assert short["parameters"].get("required") == long["parameters"].get("required")
        assert set(short["parameters"]["properties"]) == set(long["parameters"]["properties"])
        for prop in short["parameters"]["properties"].values():
            assert "description" not in prop and "anyOf" not in prop and "type" in prop
    assert SCHEMAS[0]["function"]["parameters"]["properties"]["path"].get("description")


def test_an_unknown_window_offers_everything_in_full() -> None:
    chosen = offer(PROMPT, SCHEMAS, allowance=None, window=None)
    assert chosen.names == NAMES and not chosen.terse and chosen.left_out == []
    assert "window unknown" in chosen.summary(8)


def test_a_big_window_full_a_middling_one_terse_a_small_one_the_core_first() -> None:
    big = offer(PROMPT, SCHEMAS, allowance=Budget(8192).fixed_tokens, window=8192)
    assert big.names == NAMES and not big.terse
    middle = offer(PROMPT, SCHEMAS, allowance=Budget(4096).fixed_tokens, window=4096)
    assert middle.names == NAMES and middle.terse
    small = offer(PROMPT, SCHEMAS, allowance=Budget(2048).fixed_tokens, window=2048)
    assert small.terse and set(CORE) <= set(small.names) and small.left_out
    assert small.names + small.left_out == [n for n in NAMES if n in small.names] + [
        n for n in NAMES if n in small.left_out
    ]  # each list in the usual order
    assert small.fixed <= Budget(2048).fixed_tokens < big.fixed
    assert f"left out to fit: {', '.join(small.left_out)}" in small.summary(8)


def test_text_mode_counts_the_tools_in_the_prompt() -> None:
    chosen = offer(PROMPT, SCHEMAS, allowance=None, window=None, textual=True)
    assert chosen.tools_tokens == 0 and chosen.prompt_tokens > 1000


def test_forced_forms() -> None:
    terse_always = offer(PROMPT, SCHEMAS, allowance=None, window=None, descriptions="terse")
    assert terse_always.terse and terse_always.names == NAMES
    full_small = offer(PROMPT, SCHEMAS, allowance=600, window=2048, descriptions="full")
    assert not full_small.terse and full_small.left_out


def test_when_nothing_fits_it_says_what_to_change() -> None:
    chosen = offer(PROMPT, SCHEMAS, allowance=100, window=400)
    assert not chosen.fits and chosen.names == [] and chosen.minimum > 100
    line = chosen.too_small()
    assert "400 tokens" in line and "[model] context_window" in line and "\n" not in line


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every count the offer makes with the tokenizer's functions, by name."""
    counted: list[str] = []
    for name in ("text_tokens", "tools_tokens"):
        real = getattr(fixed_part, name)

        def count(value: Any, real: Any = real, name: str = name) -> int:
            counted.append(name)
            return int(real(value))

        monkeypatch.setattr(fixed_part, name, count)
    return counted


def test_an_offer_counts_only_where_a_count_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _counting(monkeypatch)
    unknown = offer(PROMPT, SCHEMAS, allowance=None, window=None)
    roomy = offer(PROMPT, SCHEMAS, allowance=Budget(128_000).fixed_tokens, window=128_000)
    assert counted == []  # nothing to decide; the bytes alone show everything fits
    assert unknown.names == roomy.names == NAMES and not roomy.terse
    assert unknown.fixed == roomy.fixed > 1000 and counted  # counted once read, the same
    counted.clear()
    assert unknown.fixed == roomy.fixed and counted == []  # and only once


def test_the_byte_bound_never_chooses_what_counting_would_not() -> None:
    for window in (1024, 1500, 2048, 3000, 4096, 6000, 8192, 16384):
        allowance = Budget(window).fixed_tokens
        chosen = offer(PROMPT, SCHEMAS, allowance=allowance, window=window)
        assert not chosen.fits or chosen.fixed <= allowance
        bytes_of = text_bytes(PROMPT) + tools_bytes(chosen.schemas) + PER_MESSAGE
        assert chosen.fixed <= bytes_of  # the bound bounds
