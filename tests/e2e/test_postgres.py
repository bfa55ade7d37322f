"""PostgreSQL from the command line: --db, the config key, the set-up commands, errors."""

from __future__ import annotations

import json
import socket

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text

SECRET = "s3cret-pw"


def with_password(url: str) -> str:
    """The same database, with a password in the URL (the test server trusts localhost)."""
    user, _, rest = url.removeprefix("postgresql://").partition("@")
    return f"postgresql://{user}:{SECRET}@{rest}"


def test_db_flag_and_config_key_take_a_url_and_never_show_the_password(
    agent: Agent, pg_url: str
) -> None:
    url = with_password(pg_url)
    agent.server.push(text("Stored in PostgreSQL."))
    ran = agent.run("run", "hello", "--db", url, "-o", "json")
    assert ran.returncode == 0, ran.stderr
    thread = json.loads(ran.stdout)["thread_id"]

    config = agent.workspace / "c.toml"  # the postgres:// spelling, in the config file
    config.write_text(f'[storage]\ndb = "{url.replace("postgresql://", "postgres://")}"\n')
    listed = agent.run("threads", "list", "--json", "--config", str(config))
    assert [t["thread_id"] for t in json.loads(listed.stdout)] == [thread]
    assert agent.run("threads", "list", "--json").stdout.strip() == "[]"  # the SQLite default

    shown = agent.run("config", "show", "--json", "--db", url)
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    masked = url.replace(SECRET, "***")
    assert report["database"] == masked
    assert report["settings"]["storage.db"] == {"value": masked, "source": "flag"}
    doctor = agent.run("doctor", "--db", url)
    assert doctor.returncode == 0, doctor.stdout
    assert f"database: {masked} is writable (1 thread)" in doctor.stdout
    for output in (shown.stdout, doctor.stdout, doctor.stderr, ran.stderr):
        assert SECRET not in output


def test_an_unreachable_server_is_one_line_naming_host_and_database(agent: Agent) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent.env["AGENTCLI_DB"] = f"postgresql://ann:{SECRET}@127.0.0.1:{port}/agents"
    result = agent.run("run", "hello")
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"agentcli: error: cannot connect to PostgreSQL at 127.0.0.1:{port}/agents: "
    )
    assert len(result.stderr.splitlines()) == 1 and SECRET not in result.stderr
    doctor = agent.run("doctor")
    assert doctor.returncode == 1 and "✗ database: cannot connect" in doctor.stdout
    assert SECRET not in doctor.stdout


def test_processes_starting_together_on_a_new_database_all_get_through(
    agent: Agent, pg_url: str
) -> None:
    # each sets the tables up; PostgresSaver.setup's CREATE INDEX CONCURRENTLY once waited
    # for the snapshot of a process queued behind it, which waited for it: a silent hang
    agent.env["AGENTCLI_DB"] = pg_url
    agent.server.push(*[text("Hi.")] * 3)
    runs = [agent.start("run", f"hello {n}") for n in range(3)]
    try:
        # a hang never ends; on a machine at load 15, three cold starts on a new database
        # took over a minute
        results = [run.communicate(timeout=240) for run in runs]
    finally:
        for run in runs:
            run.kill()
    assert [run.returncode for run in runs] == [0, 0, 0], results
    assert len(json.loads(agent.run("threads", "list", "--json").stdout)) == 3
