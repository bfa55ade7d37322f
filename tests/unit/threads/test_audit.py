"""The audit trail: every decision, who made it, what ran; shown and exported with the thread."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, messages_from_dict

from agentcli.policy.approval_policy import Policy
from agentcli.session import history
from agentcli.session.transcript import decision_text, entries, to_json
from agentcli.ui.markdown_export import to_markdown
from tests.helpers.fakes import call, say


def test_every_kind_of_decision_is_recorded(make) -> None:
    rules = [
        {"tool": "peek", "match": "public/*", "decision": "allow"},
        {"tool": "peek", "match": "secret/*", "decision": "deny"},
    ]
    policy = Policy.build(rules=rules, flag_allow=["note"])
    turn_one = call(
        ("peek", {"path": "public/a"}),
        ("peek", {"path": "secret/b"}),
        ("note", {"text": "flagged"}),
        ("peek", {"path": "x"}),
        ("peek", {"path": "y"}),
        ("peek", {"path": "z"}),
        ("peek", {"path": "w"}),
        ("peek", {"nope": 1}),
    )
    s = make([turn_one, say("done")], policy, max_invalid_turns=5)
    review = [e for e in list(s.send("go")) if type(e).__name__ == "ReviewRequest"][0]
    assert [r["args"]["path"] for r in review.action_requests] == ["x", "y", "z", "w"]
    list(
        s.decide(
            [
                {"type": "approve", "by": "terminal"},
                {
                    "type": "edit",
                    "edited_action": {"name": "peek", "args": {"path": "y2"}},
                    "by": "terminal",
                },
                {"type": "reject", "by": "terminal"},
                {"type": "reject", "message": "look at v instead", "by": "terminal"},
            ]
        )
    )
    audit = s.state().values["audit"]
    summary = [
        (a["args"].get("path"), a["decision"], a["who"], a["ran_args"], a["feedback"])
        for a in audit
    ]
    assert summary == [
        ("public/a", "allowed", "rule", {"path": "public/a"}, None),
        ("secret/b", "denied", "rule", None, None),
        (None, "allowed", "flag", {"text": "flagged"}, None),
        (None, "invalid", "agentcli", None, None),
        ("x", "approved", "person", {"path": "x"}, None),
        ("y", "edited", "person", {"path": "y2"}, None),
        ("z", "rejected", "person", None, None),
        ("w", "feedback", "person", None, "look at v instead"),
    ]
    assert audit[0]["by"] == "rule 1 (peek public/*)" and audit[1]["by"] == "rule 2 (peek secret/*)"
    assert audit[2]["by"] == "flag --approve" and audit[4]["by"] == "terminal"
    assert all(a["at"].startswith("20") for a in audit)
    assert "field required" in audit[3]["by"].lower()


def test_policy_decisions_of_a_parked_thread_are_recorded_as_flag(make) -> None:
    s = make([call(("note", {"text": "n"})), say("ok")])
    review = [e for e in s.send("go") if type(e).__name__ == "ReviewRequest"][0]
    s.policy = Policy.build(auto_approve=True)
    decisions = s.policy_decisions(review)
    list(s.decide(decisions))
    record = s.state().values["audit"][0]
    assert (record["decision"], record["who"], record["by"]) == (
        "allowed",
        "flag",
        "flag --auto-approve",
    )


def test_transcript_show_and_export_round_trip(make) -> None:
    s = make([call(("note", {"text": "a"}), ("peek", {"path": "p"})), say("all done")])
    list(s.send("do it"))
    list(
        s.decide(
            [
                {"type": "approve", "by": "terminal"},
                {"type": "reject", "message": "no", "by": "terminal"},
            ]
        )
    )
    values = history.values(s.store, s.thread_id)
    turns = entries(values)
    assert [t["role"] for t in turns] == ["user", "assistant", "assistant"]
    first, second = turns[1]["calls"]
    assert first["result"] == "noted 'a' x1" and first["decision"]["decision"] == "approved"
    assert second["result"] == "no" and second["decision"]["feedback"] == "no"
    assert decision_text(first["decision"]).startswith("approved by person: terminal, 20")

    row = s.store.resolve(s.thread_id)
    loaded = json.loads(to_json(row, values))  # complete: LangChain rebuilds every message
    loaded["messages"] = messages_from_dict(loaded["messages"])
    assert loaded["thread"]["thread_id"] == s.thread_id
    assert [type(m) for m in loaded["messages"]] == [type(m) for m in values["messages"]]
    assert [m.content for m in loaded["messages"]] == [m.content for m in values["messages"]]
    assert isinstance(loaded["messages"][1], AIMessage) and loaded["messages"][1].tool_calls[0][
        "args"
    ] == {"text": "a"}
    assert loaded["audit"] == values["audit"]

    markdown = to_markdown(row, values)
    assert markdown.startswith("# do it\n")
    assert "**You:**\n\n> do it\n" in markdown and "**Assistant:**\n\n> all done\n" in markdown
    assert "- tool `peek` (feedback by person: terminal" in markdown
