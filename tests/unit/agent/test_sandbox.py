"""The sandbox on agentcli's side: the seal that carries an "unconfined once", the answers that
may ask for it, the rules that may grant it, and the sandbox the settings make (the mechanism
itself: tests/tools/test_sandbox.py)."""

from __future__ import annotations

import pytest

from agentcli.agent.review.answers import decisions_in
from agentcli.agent.review.approval_seals import call_sealed, seal_call
from agentcli.agent.toolset.sandboxing import unconfined_rule
from agentcli.config import Settings, load_settings
from agentcli.errors import ConfigError
from agentcli.policy.approval_policy import Policy
from agentcli.threads.store_key import PROCESS_KEY

CALL = {"id": "call_1", "name": "shell", "args": {"command": "touch /x"}}


@pytest.mark.parametrize(
    "task",
    [
        {"tool_call": CALL, "approval": seal_call(PROCESS_KEY, "t", 3, CALL), "sandbox": "off"},
        {"tool_call": CALL, "approval": seal_call(PROCESS_KEY, "t", 3, CALL), "sandbox": "OFF"},
        {"tool_call": CALL, "approval": seal_call(PROCESS_KEY, "t", 3, CALL, True)},
        {
            "tool_call": CALL,
            "approval": seal_call(PROCESS_KEY, "t", 4, CALL, True),
            "sandbox": "off",
        },
    ],
)
def test_unconfined_runs_only_with_its_own_seal(task: dict) -> None:
    assert not call_sealed(PROCESS_KEY, "t", 3, task)


def test_the_seal_of_an_unconfined_call_verifies() -> None:
    task = {"tool_call": CALL, "approval": seal_call(PROCESS_KEY, "t", 3, CALL, True)}
    assert call_sealed(PROCESS_KEY, "t", 3, {**task, "sandbox": "off"})
    plain = {"tool_call": CALL, "approval": seal_call(PROCESS_KEY, "t", 3, CALL)}
    assert call_sealed(PROCESS_KEY, "t", 3, plain)


@pytest.mark.parametrize(
    ("decision", "confined"),
    [
        ({"type": "approve", "sandbox": "off"}, False),  # a call that runs in no sandbox
        ({"type": "reject", "sandbox": "off"}, True),
        ({"type": "edit", "edited_action": {"args": {}}, "sandbox": "off"}, True),
        ({"type": "approve", "sandbox": "read-only"}, True),
        ({"type": "approve", "sandbox": True}, True),
    ],
)
def test_only_an_approve_of_a_confined_call_may_lift_it(decision: dict, confined: bool) -> None:
    with pytest.raises(ValueError, match="sandbox"):
        decisions_in({"decisions": [decision]}, 1, confined=[confined])


def test_an_approve_of_a_confined_call_may_lift_it() -> None:
    answer = {"decisions": [{"type": "approve", "sandbox": "off"}]}
    assert decisions_in(answer, 1, confined=[True])[0]["sandbox"] == "off"


@pytest.mark.parametrize(
    "rule",
    [
        {"tool": "shell", "match": "git *", "decision": "ask", "sandbox": "off"},
        {"tool": "shell", "decision": "allow", "sandbox": "off"},  # every command
        {"tool": "*", "match": "git *", "decision": "allow", "sandbox": "off"},
        {"tool": "shell", "match": "git *", "decision": "allow", "sandbox": "on"},
    ],
)
def test_a_sandbox_key_is_only_for_a_shell_allow_rule_with_a_match(rule: dict, tmp_path) -> None:
    config = tmp_path / "c.toml"
    lines = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in rule.items())
    config.write_text("[[approval.rules]]\n" + lines)
    with pytest.raises(ConfigError, match="sandbox"):
        load_settings(config)


def test_every_command_of_the_line_must_match_a_lifting_rule() -> None:
    policy = Policy.build(
        rules=[
            {"tool": "shell", "match": "git commit *", "decision": "allow", "sandbox": "off"},
            {"tool": "shell", "match": "ls*", "decision": "allow"},
        ]
    )
    assert unconfined_rule(policy.rules, "shell", {"command": "git commit -m x"})
    assert unconfined_rule(policy.rules, "shell", {"command": "git commit -m x; ls"}) is None
    assert unconfined_rule(policy.rules, "shell", {"command": "git commit $(rm x)"}) is None
    assert unconfined_rule(policy.rules, "write_file", {"command": "git commit -m x"}) is None


def test_the_settings_make_the_sandbox() -> None:
    from agentcli.agent.toolset.sandboxing import sandbox_of

    settings = Settings(sandbox_mode="read-only", sandbox_network=True, sandbox_writable=["~/c"])
    sandbox = sandbox_of(settings)
    assert (sandbox.mode, sandbox.network, sandbox.writable) == ("read-only", True, ("~/c",))
    # agentcli's own data stays read-only to confined commands (the workspace may hold it)
    db = str(settings.db_path)
    assert sandbox.protected == (
        str(settings.snapshots_dir),
        db,
        f"{db}-wal",
        f"{db}-shm",
        f"{db}-journal",
    )
