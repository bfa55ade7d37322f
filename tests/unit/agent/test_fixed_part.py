"""The fixed part of a request fitted to a window (agent/context/fixed_part.py)."""

from __future__ import annotations

from agentcli_tools.registry import BUILTIN_TOOLS

from agentcli.agent.agent_graph import SYSTEM
from agentcli.agent.context.compaction import Budget
from agentcli.agent.context.fixed_part import CORE, offer, schema_of, terse

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
