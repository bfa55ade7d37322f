"""The sandbox's pieces: the rights asked of each Landlock ABI, the seal that carries an
"unconfined once", the answers that may ask for it, and the rules that may grant it."""

from __future__ import annotations

import pytest
from agentcli_tools import confine
from agentcli_tools.sandbox import Sandbox, SandboxUnavailable, denied, mechanism

from agentcli.agent.review.answers import decisions_in
from agentcli.agent.review.approval_seals import PROCESS_KEY, call_sealed, seal_call
from agentcli.agent.toolset.sandboxing import unconfined_rule
from agentcli.config import Settings, load_settings
from agentcli.errors import ConfigError
from agentcli.policy.approval_policy import Policy

CALL = {"id": "call_1", "name": "shell", "args": {"command": "touch /x"}}


def test_each_abi_is_asked_only_the_rights_it_knows() -> None:
    one, on_files_one = confine.rights(1)
    assert not one & (confine.REFER | confine.TRUNCATE) and on_files_one == confine.WRITE_FILE
    two, _ = confine.rights(2)
    assert two & confine.REFER and not two & confine.TRUNCATE
    seven, on_files = confine.rights(7)
    assert seven & confine.TRUNCATE and on_files == confine.WRITE_FILE | confine.TRUNCATE
    assert not seven & 1  # EXECUTE, READ_FILE and READ_DIR are never handled: reads stay
    assert not seven & (1 << 2 | 1 << 3 | 1 << 15)


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


def test_no_mechanism_refuses_and_never_plans_unconfined(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AGENTCLI_TEST_SANDBOX_MISSING", "landlock,bwrap")
    mechanism.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="install bubblewrap, or run agentcli"):
            Sandbox().plan(tmp_path)
        assert Sandbox(mode="off").plan(tmp_path) is None
        assert "refused" in Sandbox().label()
    finally:
        mechanism.cache_clear()


def test_the_note_comes_only_for_a_confined_failure_that_reads_as_a_refusal(tmp_path) -> None:
    plan = {"mode": "workspace-write", "workspace": str(tmp_path), "writable": ["/t"]}
    plan["network"] = False
    assert denied(plan, 1, "touch: cannot touch '/etc/x': Permission denied")
    assert denied(plan, 1, "connect: Connection refused")
    assert denied(plan, 0, "Permission denied") is None
    assert denied(None, 1, "Permission denied") is None
    assert denied(plan, 2, "error: no such file") is None
    assert denied({**plan, "network": True}, 1, "Connection refused") is None


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
