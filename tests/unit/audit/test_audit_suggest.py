"""Which rules `audit suggest` proposes, and which it never does."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

from agentcli.audit.log import Entry, args_diff, parse_since
from agentcli.audit.suggest import suggestions
from agentcli.policy.allow_all import allows_everything

CALL_IDS = itertools.count(1)


def entry(
    tool: str, args: dict, decision: str = "approved", who: str = "person", workspace: str = ""
) -> Entry:
    """A decision of its own (a call id no other has)."""
    call = f"c{next(CALL_IDS)}"
    return Entry("2025-01-01T00:00:00+00:00", "t", workspace, call, tool, decision, who, "x",
                 args, None, None, "ok", None, True)  # fmt: skip


def shell(command: str, decision: str = "approved", who: str = "person") -> Entry:
    return entry("shell", {"command": command}, decision, who)


def found(*entries: Entry) -> list[tuple[str, str, int]]:
    return [(s.tool, s.match, s.count) for s in suggestions(list(entries))]


def test_the_rule_a_would_offer_counted_over_every_call_it_fits() -> None:
    calls = [shell("git status"), shell("git status"), shell("git status --short")]
    # `git status *` fits only the third call, which `git status*` fits too: left out
    assert found(*calls) == [("shell", "git status*", 3)]
    (only,) = suggestions(calls)
    assert only.example == {"command": "git status"}
    assert 'match = "git status*"\ndecision = "allow"' in only.toml()
    assert suggestions(calls, min_count=4) == []


def test_a_call_rejected_edited_or_answered_with_feedback_spoils_every_rule_that_fits_it() -> None:
    for unwanted in ("rejected", "edited", "feedback"):
        assert found(*[shell("ls") for _ in range(3)], shell("ls", unwanted)) == []
        assert (
            found(*[shell("git status") for _ in range(3)], shell("git status -uno", unwanted))
            == []
        )
    assert found(*[shell("ls") for _ in range(3)], shell("rm x", "rejected")) == [
        ("shell", "ls", 3)
    ]


def test_only_a_persons_approvals_count() -> None:
    assert (
        found(
            *[shell("make test", who="policy") for _ in range(5)],
            *[shell("make test") for _ in range(2)],
        )
        == []
    )


def test_never_a_rule_that_lets_an_interpreter_run_anything() -> None:
    calls = (
        [shell("python x.py") for _ in range(3)]
        + [shell("sudo ls") for _ in range(3)]
        + [shell("npx cowsay") for _ in range(3)]
    )
    calls += [shell("bash -c 'echo hi'") for _ in range(3)]
    for suggestion in suggestions(calls):
        assert allows_everything("shell", suggestion.match, "allow") is None
    # each is suggested exactly as approved, which allows nothing more
    assert {s.match for s in suggestions(calls)} == {
        "python x.py", "sudo ls", "npx cowsay", "bash -c 'echo hi'"
    }  # fmt: skip


def test_file_rules_are_the_folder_in_the_calls_workspace(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    ws = str(tmp_path)
    calls = [entry("write_file", {"path": f"docs/{n}.md"}, workspace=ws) for n in "abc"]
    assert found(*calls) == [("write_file", "docs/*", 3)]
    # a tool with nothing to scope a rule by: a rule would allow every call
    assert found(*[entry("calc__add", {"a": 1}) for _ in range(5)]) == []


def test_since_and_the_diff() -> None:
    assert parse_since("2025-01-31").isoformat() == "2025-01-31T00:00:00+00:00"
    assert (parse_since("2025-01-31") - parse_since("2d", parse_since("2025-02-02"))).days == 0
    assert args_diff({"a": 1}, {"a": 1}) is None
    diff = args_diff({"a": 1}, {"a": 2})
    assert diff == '--- model\n+++ ran\n@@ -1,3 +1,3 @@\n {\n-  "a": 1\n+  "a": 2\n }'


def test_a_decision_copied_into_forks_counts_once() -> None:
    """A fork (an undo) copies its source's audit records as they are: the person approved
    `ls` twice, and four forks each holding both copies are not eight approvals."""
    twice = [replace(shell("ls"), hash="h1"), replace(shell("ls"), hash="h2")]
    copies = [replace(e, thread=f"fork{n}") for n in range(4) for e in twice]
    assert found(*twice, *copies) == []  # 2 < the default 3
    assert [(s.tool, s.match, s.count) for s in suggestions([*twice, *copies], 2)] == [
        ("shell", "ls", 2)
    ]
    unchained = [replace(e, hash=None) for e in twice]  # older records: by their content
    copied = [replace(e, thread="fork") for e in unchained]
    assert [s.count for s in suggestions([*unchained, *copied], 2)] == [2]
