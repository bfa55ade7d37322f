"""Hostile input never crashes anything: config files, edited JSON, tool arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentcli_tools.registry import builtin_tools
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli.agent.review.answers import decisions_in
from agentcli.agent.review.argument_check import validate_args
from agentcli.config import load_settings
from agentcli.errors import ConfigError

TOOLS = {tool.name: tool for tool in builtin_tools()}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
toml_keys = st.sampled_from(["model", "agent", "approval", "tools", "storage", "mcp", "x"])


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_any_config_text_loads_or_is_a_config_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_settings(path)
    except ConfigError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc).strip()


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    section=toml_keys,
    values=st.dictionaries(st.text(min_size=1, max_size=12), json_values, max_size=4),
)
def test_any_config_structure_loads_or_is_a_config_error(
    tmp_path: Path, section: str, values: dict
) -> None:
    path = tmp_path / "config.toml"
    lines = [f"[{section}]"] + [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in values.items()]
    path.write_text("\n".join(lines))
    try:
        load_settings(path)
    except ConfigError:
        pass


@settings(max_examples=300)
@given(name=st.sampled_from(sorted(TOOLS)), args=json_values)
def test_any_arguments_are_accepted_or_explained(name: str, args: object) -> None:
    problem = validate_args(TOOLS[name], args, list(TOOLS))
    assert problem is None or (isinstance(problem, str) and problem)


@settings(max_examples=300)
@given(answer=json_values | st.text(max_size=40))
def test_any_review_answer_is_used_or_refused_cleanly(answer: object) -> None:
    try:
        decisions = decisions_in(answer, 1)
    except ValueError:  # JSONDecodeError included: one clear refusal, nothing else
        return
    assert decisions[0]["type"] in ("approve", "edit", "reject")


@pytest.mark.parametrize("raw", ["", "{", "[]", '"text"', "null", '{"a": }', "\x00", "1e999"])
def test_edited_json_that_is_not_an_object_is_refused(raw: str) -> None:
    try:
        args = json.loads(raw)
    except json.JSONDecodeError:
        return
    assert validate_args(TOOLS["write_file"], args) is not None
