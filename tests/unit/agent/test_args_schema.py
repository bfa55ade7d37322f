"""JSON-schema tools' arguments at review (agent/review/args_schema.py, args_coercion.py):
checked within bounds, fail closed on a hostile schema, and only an edit's strings are converted."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool

from agentcli.agent.review.args_coercion import coerce_edit
from agentcli.agent.review.args_schema import MAX_SCHEMA_CHARS, schema_problem
from agentcli.agent.review.argument_check import validate_args
from agentcli.config import Settings
from agentcli.events import ReviewRequest
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say
from tests.helpers.waiting import ends

ADD = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
RICH = {
    "type": "object",
    "properties": {
        "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "x": {"type": "number"},
        "flag": {"type": "boolean"},
        "opts": {"$ref": "#/$defs/Opts"},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "name": {"type": "string"},
        "either": {"type": ["string", "integer"]},
        "free": {},
    },
    "$defs": {"Opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}},
}


def json_tool(schema: dict[str, Any]) -> StructuredTool:
    return StructuredTool(
        name="t", description="d", args_schema=schema, coroutine=None, func=lambda **kw: "ok"
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"a": "2", "b": 3}, "'a': '2' is not of type 'integer'"),
        ({"a": 2.5, "b": 3}, "'a': 2.5 is not of type 'integer'"),
        ({"a": True, "b": 3}, "'a': True is not of type 'integer'"),
        ({"a": 2}, "'(arguments)': 'b' is a required property"),
        ({"a": 2, "b": 3, "c": 4}, "additional properties are not allowed ('c' unexpected)"),
    ],
)
def test_a_model_call_that_does_not_fit_is_invalid_and_left_as_it_was(
    args: dict[str, Any], fragment: str
) -> None:
    before = copy.deepcopy(args)
    problem = validate_args(json_tool(ADD), args)
    assert problem is not None and problem.startswith("invalid arguments: ")
    assert fragment in problem
    assert args == before  # a model's call is never converted
    assert validate_args(json_tool(ADD), {"a": 2, "b": 3}) is None


HOSTILE = [
    {"$ref": "#"},
    {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
    {"type": "object", "properties": {"x": {"$ref": "https://127.0.0.1:9/schema.json"}}},
    {"type": "object", "properties": {"x": {"$ref": "file:///etc/passwd"}}},
    {"type": "object", "properties": {"x": {"type": "string", "pattern": "(a" + "|a" * 600}}},
    {"type": "object", "properties": {"x": {"type": "string", "pattern": "^(a|a)*$"}}},
    {"type": "object", "properties": {"x": {"type": "string", "pattern": "(("}}},
    {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "integer"}}},
    {"type": 5},
    {"type": "object", "properties": {"x": {"maxLength": "ten"}}},
    {"type": "object", "properties": {"x": {"enum": ["a" * 1000] * (MAX_SCHEMA_CHARS // 1000)}}},
    {"unevaluatedProperties": False, "patternProperties": {"^(a|a)*$": {}}},
    {
        "$defs": {
            **{f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(40)},
            "d40": {"type": "string"},
        },
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/d0"}},
    },
]


@pytest.mark.parametrize("schema", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_schema_fails_closed_within_the_budget(schema: dict[str, Any]) -> None:
    word = "a" * 40 + "!"
    # matching these the whole way takes hours (2**40 paths): ending at all is the budget
    problem = ends(
        lambda: schema_problem(schema, {"x": 5 if "$defs" in schema else word, word: 1}),
        what="the check gave up at its budget",
    )
    assert problem is not None
    assert len(problem) < 2000


def test_an_edit_is_converted_where_the_schema_is_unambiguous() -> None:
    args = {
        "n": "7",
        "x": "1.5",
        "flag": "true",
        "opts": '{"deep": "false"}',
        "tags": ["1", "2"],
        "name": "5",
        "either": "5",
        "free": "5",
    }
    assert validate_args(json_tool(RICH), args, edited=True) is None
    assert args == {
        "n": 7,
        "x": 1.5,
        "flag": True,
        "opts": {"deep": False},
        "tags": [1, 2],
        "name": "5",  # a string is allowed: it stays one
        "either": "5",
        "free": "5",
    }
    assert coerce_edit(RICH, {"n": "null"}) == {"n": None}
    for left in ("07", "5.0", "1e3", " 5", "five", "True", ""):
        assert coerce_edit(ADD, {"a": left, "b": 1})["a"] == left  # not exactly an integer


def test_an_edit_that_still_does_not_fit_is_refused_and_not_changed() -> None:
    args = {"a": "5", "b": "x"}
    problem = validate_args(json_tool(ADD), args, edited=True)
    assert problem is not None and "'b': 'x' is not of type 'integer'" in problem
    assert args == {"a": "5", "b": "x"}


@given(st.integers(min_value=-(10**30), max_value=10**30), st.booleans())
def test_any_integer_or_boolean_typed_as_text_is_read_back(number: int, flag: bool) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "f": {"type": "boolean"}}}
    assert coerce_edit(schema, {"n": str(number), "f": str(flag).lower()}) == {
        "n": number,
        "f": flag,
    }


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.text(max_size=20)))
def test_strings_where_the_schema_allows_strings_are_never_converted(
    args: dict[str, str],
) -> None:
    allows_text = {"a": {"type": "string"}, "b": {"type": ["string", "integer"]}, "c": {}}
    schema = {"type": "object", "properties": allows_text}
    assert coerce_edit(schema, args) == args


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "zz"]), JSONISH, max_size=4))
def test_the_model_s_arguments_reach_the_tool_only_when_they_fit(args: dict[str, Any]) -> None:
    fits = set(args) == {"a", "b"} and all(type(args[k]) is int for k in ("a", "b"))
    before = copy.deepcopy(args)
    assert (validate_args(json_tool(ADD), args) is None) == fits
    assert args == before


def test_a_clients_string_edit_runs_converted_and_the_model_s_own_call_goes_back(
    tmp_path: Path, database: str
) -> None:
    """Through the graph, as Agent Chat UI sends it: the approve node converts the edit
    (no terminal check before it); a model's call with a string goes back unasked."""
    ran: list[dict[str, Any]] = []
    adder = StructuredTool(
        name="add", description="Add.", args_schema=ADD, func=lambda **kw: ran.append(kw) or "ok"
    )
    config = Settings(db=database)
    model = FakeChatModel(
        replies=[call(("add", {"a": "2", "b": 3})), call(("add", {"a": 2, "b": 3})), say("done")],
        calls=[],
    )
    s = Session(
        config, open_store(config), Policy(), workspace=tmp_path, model=model, tools=[adder]
    )
    events = list(s.send("add"))
    assert ran == [] and [e for e in events if isinstance(e, ReviewRequest)]
    first = next(m for m in s.state().values["messages"] if isinstance(m, ToolMessage))
    assert "'a': '2' is not of type 'integer'" in str(first.content)  # no one was asked
    edit = {"type": "edit", "edited_action": {"name": "add", "args": {"a": "5", "b": "3"}}}
    list(s.decide([edit]))
    assert ran == [{"a": 5, "b": 3}]
    record = s.state().values["audit"][-1]
    assert (record["decision"], record["ran_args"]) == ("edited", {"a": 5, "b": 3})
    asked = [m for m in s.state().values["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert asked[-1].tool_calls[0]["args"] == {"a": 5, "b": 3}
