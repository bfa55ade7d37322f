"""What people reach for first (issue 14, items 7, 9 and 10): `--debug` anywhere, doctor's
model and AGENTS.md lines, AGENTS.md reaching the model, `@path`, `!command`, `/cost` with
no prices configured, and the set-up guide on a machine with nothing configured."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text
from tests.helpers.terminal import PROMPT, doctor_line, leave


def system_prompt(agent: Agent, request: int = 0) -> str:
    first = agent.server.requests[request]["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def last_user(agent: Agent, request: int = -1) -> str:
    users = [m for m in agent.server.requests[request]["messages"] if m["role"] == "user"]
    return users[-1]["content"]


def test_debug_is_accepted_after_the_subcommand(agent: Agent) -> None:
    bad = agent.workspace / "bad.toml"
    bad.write_text("[model]\ntimeout = 'soon'\n")
    for args in (("tools", "--debug"), ("--debug", "tools"), ("config", "show", "--debug")):
        result = agent.run(*args, "--config", str(bad))
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" in result.stderr and "No such option" not in result.stderr, args
        assert 'model.timeout = "soon" in' in result.stderr
    plain = agent.run("tools", "--config", str(bad))
    assert "Traceback" not in plain.stderr
    assert plain.stderr == (
        f'agentcli: error: model.timeout = "soon" in {bad}: expected a number of seconds, e.g. 60\n'
    )


def test_every_config_problem_at_once_and_flags_with_did_you_mean(agent: Agent) -> None:
    config = agent.workspace / "c.toml"
    config.write_text(
        '[approval]\ndeny = ["shel"]\n[[approval.rules]]\ntool = "raed_file"\ndecision = "allow"\n'
    )
    result = agent.run("run", "hi", "--config", str(config))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"agentcli: error: approval.deny = [\"shel\"] in {config}: no tool is named 'shel'"
        " (did you mean 'shell'?)",
        f'agentcli: error: [[approval.rules]] number 1 in {config}: tool = "raed_file": no tool'
        " is named 'raed_file' (did you mean 'read_file'?)",
    ]
    flags = agent.run("run", "hi", "--approve", "shel", "--deny", "fetch_ur")
    assert flags.returncode == 2 and flags.stderr.splitlines() == [
        "agentcli: error: --approve shel: no tool is named 'shel' (did you mean 'shell'?)",
        "agentcli: error: --deny fetch_ur: no tool is named 'fetch_ur' (did you mean 'fetch_url'?)",
    ]
    assert agent.server.requests == []


def test_doctor_fails_a_model_the_server_does_not_list(agent: Agent) -> None:
    result = agent.run("doctor", "--model", "scriptd")
    assert result.returncode == 1, result.stdout
    assert doctor_line(result.stdout, "model server").startswith("✓")
    model = doctor_line(result.stdout, "model")
    assert model.startswith("✗") and "'scriptd' is not among the models the server lists" in model
    assert "(did you mean 'scripted'?)" in model
    listed = agent.run("doctor")
    assert listed.returncode == 0 and doctor_line(listed.stdout, "model").startswith("✓")


def test_agents_md_reaches_the_model_and_doctor_shows_it(agent: Agent) -> None:
    (agent.workspace / "AGENTS.md").write_text("Always answer in haiku.\n")
    agent.server.push(text("ok"))
    result = agent.run("run", "hi")
    assert result.returncode == 0, result.stderr
    prompt = system_prompt(agent)
    assert '<project_instructions file="AGENTS.md">\nAlways answer in haiku.\n' in prompt
    assert prompt.rstrip().endswith("</project_instructions>")
    doctor = agent.run("doctor")
    shown = doctor_line(doctor.stdout, "AGENTS.md")
    assert shown.startswith("✓") and f"{agent.workspace / 'AGENTS.md'} (24 bytes)" in shown


def test_at_path_attaches_a_file_and_refuses_paths_out(agent: Agent, tmp_path: Path) -> None:
    (agent.workspace / "notes.txt").write_text("the secret word is plover\n")
    (tmp_path / "outside.txt").write_text("not for the model\n")
    (agent.workspace / "out").symlink_to(tmp_path / "outside.txt")
    agent.server.push(text("got it"))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendline("read @../outside.txt")
    child.expect(r"@\.\./outside\.txt not attached: .*outside the workspace")
    child.expect(PROMPT)
    child.sendline("read @out please")
    child.expect(r"@out not attached: .*outside the workspace")
    child.expect(PROMPT)
    child.send("summarise @no\t")  # Tab completes a workspace path after @
    child.expect("tes.txt")  # the rest of the name, put in
    child.sendline(", and ask bob@example.com about @nofile")
    child.expect(r"attached notes\.txt \(26 bytes\)")
    child.expect(r"@nofile: no such file in the workspace: nothing attached \(sent as typed\)")
    child.expect("got it")
    leave(child)
    assert len(agent.server.requests) == 1  # the refused messages were not sent
    sent = last_user(agent)
    assert sent.startswith("summarise @notes.txt, and ask bob@example.com about @nofile\n\n")
    assert '<attached_file path="notes.txt">\nthe secret word is plover\n</attached_file>' in sent
    assert "not for the model" not in str(agent.server.requests)


def test_bang_runs_a_command_and_its_output_goes_with_the_next_message(agent: Agent) -> None:
    (agent.workspace / "f.txt").write_text("")
    agent.server.push(text("seen"))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendline("!ls; printf 'esc:\\033[31m\\n'")
    child.expect("f.txt")
    child.expect("esc:⟦ESC⟧")  # shown terminal-safe
    child.expect("output kept: it goes with your next message")
    child.expect(PROMPT)
    assert agent.server.requests == []  # no model, no review
    child.sendline("!")  # not a command: a message
    child.expect("seen")
    leave(child)
    sent = last_user(agent)
    assert sent.startswith("!\n\n<shell_output command=")
    assert "f.txt\nesc:\x1b[31m\n</shell_output>" in sent and "exit_code=0" in sent


def test_cost_without_config_for_a_known_model(agent: Agent) -> None:
    agent.server.push(text("hello", usage=(1_000_000, 1_000_000)))
    child = agent.spawn("chat", "--model", "gpt-4o-mini")
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect("hello")
    child.expect(PROMPT)
    child.sendline("/cost")
    child.expect(r"\$(\d+\.\d+) \(gpt-4o-mini, prices from genai-prices\)")
    assert 0 < float(child.match.group(1)) < 100
    leave(child)


def test_the_first_run_gives_the_guide_and_draws_nothing(agent: Agent) -> None:
    del agent.env["OPENAI_BASE_URL"]
    home = Path(agent.env["HOME"])
    for args in (("chat",), ("run", "hello"), ("resume",)):
        result = agent.run(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stdout == "" and "thread" not in result.stderr
        for url in ("11434/v1", "8080/v1", "8000/v1", "1234/v1"):
            assert f"--base-url http://localhost:{url}" in result.stderr
        assert "OPENAI_API_KEY" in result.stderr
    assert not (home / "data" / "agentcli" / "threads.db").exists()  # no thread, no database
    child = agent.spawn("chat")
    child.expect("no model server is set up")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and "you>" not in (child.before or "")
    doctor = agent.run("doctor")
    assert doctor.returncode == 1 and "--base-url http://localhost:11434/v1" in doctor.stdout
    assert agent.server.requests == []
