"""End-to-end fixtures: the installed `agentcli` against a scripted local model server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect
import pytest

from agentcli.config import Settings
from agentcli.threads.backends import open_store
from agentcli.threads.store import Store
from tests.helpers.environment import isolated_env
from tests.helpers.langgraph_dev import DevServer, serve
from tests.helpers.scripted_server import ScriptedServer
from tests.helpers.warm_run import warm_popen, warm_run, warm_spawn

AGENTCLI = str(Path(sys.executable).parent / "agentcli")


@dataclass
class Agent:
    """Runs the installed command with a private home, the server's URL and a workspace."""

    server: ScriptedServer
    workspace: Path
    env: dict[str, str]

    @property
    def db(self) -> str:
        """The thread database: AGENTCLI_DB (PostgreSQL runs), else the default file."""
        default = Path(self.env["XDG_DATA_HOME"]) / "agentcli" / "threads.db"
        return self.env.get("AGENTCLI_DB") or str(default)

    def store(self) -> Store:
        return open_store(Settings(db=self.db))

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """The command, to its end, started warm (tests/helpers/warm_run.py): `timeout` is
        far above the seconds it takes on an idle machine, as on a busy one (eight workers on
        two cores) it can take a minute."""
        return warm_run(
            [AGENTCLI, *args],
            env=self.env,
            cwd=self.workspace,
            stdin=stdin if stdin is not None else "",
            timeout=timeout,
        )

    def start(self, *args: str, cold: bool = False) -> Any:
        """The command in the background, its output piped (read it with communicate),
        started warm (tests/helpers/warm_run.py): a Popen, or a WarmProcess like one.
        `cold`: a real Popen, for a test whose command must be seen as `agentcli` in
        /proc (a warm one is a fork of the warm-start server)."""
        if cold:
            pipe = subprocess.PIPE
            argv = [AGENTCLI, *args]
            return subprocess.Popen(
                argv, env=self.env, cwd=self.workspace, stdout=pipe, stderr=pipe, text=True
            )
        return warm_popen([AGENTCLI, *args], env=self.env, cwd=self.workspace)

    def spawn(self, *args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
        """The command on a terminal, started warm (tests/helpers/warm_run.py)."""
        child = warm_spawn(
            [AGENTCLI, *args],
            env={**self.env, **(env or {})},
            cwd=self.workspace,
            encoding="utf-8",
            timeout=120,  # what an expect allows: far above an idle machine's few seconds
            dimensions=(40, 120),
        )
        child.logfile_read = sys.stdout  # shown by pytest only when a test fails
        return child


def slow_start(agent: Agent) -> tuple[Path, Path]:
    """A config whose tools module loads only once the returned file exists (a minute at
    most): a chat's or resume's session is being made until then (what it draws before
    the session, and the keys pressed meanwhile, can be tested without a race)."""
    slow = agent.workspace / "slow_tools.py"
    go = agent.workspace / "go"
    slow.write_text(
        "import pathlib, time\n"
        "for _ in range(1200):\n"
        f"    if pathlib.Path({str(go)!r}).exists():\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "TOOLS = []\n"
    )
    config = agent.workspace / "config.toml"
    config.write_text(f"[tools]\nmodules = ['{slow}']\n")
    return config, go


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


@pytest.fixture
def agent(
    server: ScriptedServer, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> Agent:
    """On SQLite; on PostgreSQL too (AGENTCLI_DB) for tests marked `backends`."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    env = isolated_env(
        tmp_path / "home", OPENAI_BASE_URL=server.base_url, AGENTCLI_MODEL="scripted"
    )
    if backend == "postgres":
        env["AGENTCLI_DB"] = request.getfixturevalue("pg_url")
    return Agent(server, workspace, env)


@pytest.fixture(scope="session")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """`langgraph dev` serving the repo's graph, one per pytest worker that asks for it
    (each start costs about 6 s of CPU); every test makes threads of its own on it."""
    with serve(tmp_path_factory.mktemp("langgraph-dev")) as server:
        yield server
