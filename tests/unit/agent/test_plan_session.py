"""Plan mode through Session with a scripted fake model: a plan reviewed once, run in
waves with `$N` substituted, joined into one result; dropped, edited, denied and feedback."""

from __future__ import annotations

from dataclasses import replace

from langchain_core.messages import ToolMessage

from agentcli.events import ReviewRequest, ToolResult
from agentcli.policy.approval_policy import Policy, Rule
from tests.helpers.fakes import call, say
from tests.unit.conftest import RAN


def plan(*tasks: tuple[int, str, dict, list[int]]):
    return call(
        ("plan", {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in tasks]})
    )


FOUR = plan(
    (1, "peek", {"path": "a"}, []),
    (2, "note", {"text": "saw $1"}, [1]),
    (3, "peek", {"path": "b"}, []),
    (4, "note", {"text": "${2} and $3"}, []),
)


def review_of(events: list) -> ReviewRequest:
    [review] = [e for e in events if isinstance(e, ReviewRequest)]
    return review


def joined(session) -> ToolMessage:
    messages = session.state().values["messages"]
    return next(m for m in reversed(messages) if isinstance(m, ToolMessage) and m.name == "plan")


def test_a_plan_is_reviewed_once_and_runs_with_results_substituted(make) -> None:
    s = make([FOUR, say("all done")])
    review = review_of(list(s.send("do it", plan=True)))
    assert RAN == []
    assert [r["id"].rsplit(".", 1)[1] for r in review.action_requests] == ["1", "2", "3", "4"]
    assert [t["deps"] for t in review.plan] == [[], [1], [], [2, 3]]  # $3 made 3 a dep
    events = list(s.decide([{"type": "approve"}] * 4))
    assert sorted(map(str, RAN[:2])) == sorted(map(str, [{"path": "a"}, {"path": "b"}]))
    assert RAN[2] == {"text": "saw looked at a", "times": 1}
    assert RAN[3] == {"text": "noted 'saw looked at a' x1 and looked at b", "times": 1}
    shown = [e.name for e in events if isinstance(e, ToolResult)]
    assert "note (plan task 4)" in shown
    result = joined(s)
    assert result.content.startswith("Plan results (4 tasks):")
    assert [t["state"] for t in result.artifact["plan"]] == ["done"] * 4
    assert events[-1].final == "all done"
    sent = s.model().calls[-1]
    assert sent[-1] is not None and sent[-1].name == "plan"  # the model read the one result
    audit = s.state().values["audit"]
    ran = [r for r in audit if r["decision"] == "substituted"]
    assert [r["ran_args"]["text"] for r in ran] == [RAN[2]["text"], RAN[3]["text"]]


def test_dropping_a_task_drops_its_dependents_and_an_edit_runs(make) -> None:
    s = make([FOUR, say("partly")])
    review_of(list(s.send("do it", plan=True)))
    edited = {"name": "peek", "args": {"path": "c"}}
    list(
        s.decide(
            [
                {"type": "reject"},
                {"type": "approve"},
                {"type": "edit", "edited_action": edited},
                {"type": "approve"},
            ]
        )
    )
    assert RAN == [{"path": "c"}]
    states = {t["id"]: (t["state"], t["why"]) for t in joined(s).artifact["plan"]}
    assert states[1][0] == "dropped" and states[3] == ("done", None)
    assert states[2] == ("dropped", "needs task 1, which will not run")
    assert states[4] == ("dropped", "needs task 2, which will not run")


def test_a_denied_tool_is_refused_while_the_rest_runs(make) -> None:
    policy = Policy(rules=(Rule("note", "deny"),), flag_allow=frozenset({"peek"}))
    s = make([FOUR, say("peeked only")], policy=policy)
    events = list(s.send("do it", plan=True))
    assert not [e for e in events if isinstance(e, ReviewRequest)]  # nothing left to ask
    assert RAN == [{"path": "a"}, {"path": "b"}] or RAN == [{"path": "b"}, {"path": "a"}]
    states = {t["id"]: t["state"] for t in joined(s).artifact["plan"]}
    assert states == {1: "done", 2: "dropped", 3: "done", 4: "dropped"}


def test_feedback_sends_the_plan_back_and_nothing_runs(make) -> None:
    s = make([FOUR, plan((1, "peek", {"path": "z"}, [])), say("replanned")])
    review_of(list(s.send("do it", plan=True)))
    answer = [{"type": "approve"}, {"type": "reject", "message": "read z instead"}]
    answer += [{"type": "approve"}] * 2
    review = review_of(list(s.decide(answer)))
    assert RAN == []
    told = s.model().calls[-1][-1]
    assert "read z instead" in told.content and "nothing ran" in told.content
    assert [t["args"] for t in review.plan] == [{"path": "z"}]  # the new plan is reviewed again
    list(s.decide([{"type": "approve"}]))
    assert RAN == [{"path": "z"}]


def test_an_invalid_plan_goes_back_to_the_model(make) -> None:
    bad = plan((1, "peek", {"path": "a"}, [2]), (2, "peek", {"path": "$1"}, []))
    s = make([bad, say("sorry")])
    events = list(s.send("do it", plan=True))
    assert not [e for e in events if isinstance(e, ReviewRequest)]
    told = s.model().calls[-1][-1]
    assert "circle: 1 -> 2 -> 1" in told.content


def test_plans_after_the_first_are_bounded_by_max_replans(make) -> None:
    again = [plan((1, "peek", {"path": str(n)}, [])) for n in range(3)]
    s = make([*again, say("enough")], policy=Policy(flag_allow=frozenset({"peek"})))
    s.settings = replace(s.settings, max_replans=1)
    events = list(s.send("keep planning", plan=True))
    assert [r["path"] for r in RAN] == ["0", "1"]  # the first plan and one more ran
    told = [m for m in s.state().values["messages"] if isinstance(m, ToolMessage)][-1]
    assert "max_replans is 1" in told.content and told.status == "error"
    assert events[-1].final == "enough"


def test_a_wave_larger_than_the_thread_pool_runs_in_order_without_waiting_for_ever(make) -> None:
    chain = [(1, "note", {"text": "t1"}, [])]
    chain += [(n, "note", {"text": f"t{n} after ${n - 1}"}, []) for n in range(2, 13)]
    fan = [(n, "peek", {"path": f"p{n}"}, [1]) for n in range(13, 21)]
    s = make([plan(*chain, *fan), say("twenty")], policy=Policy.build(auto_approve=True))
    events = list(s.send("a long chain", plan=True))  # 20 tasks sent at once; 6 pool threads
    assert events[-1].final == "twenty"
    notes = [r["text"] for r in RAN if "text" in r]
    assert [n.split(" ", 1)[0] for n in notes] == [f"t{n}" for n in range(1, 13)]
    assert len([r for r in RAN if "path" in r]) == 8
    assert [t["state"] for t in joined(s).artifact["plan"]] == ["done"] * 20
