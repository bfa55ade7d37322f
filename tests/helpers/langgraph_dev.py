"""`langgraph dev` for the tests: the repo's langgraph.json on a free 127.0.0.1 port, offline.

The in-memory server (langgraph-cli[inmem]) runs with the scripted model server as
OPENAI_BASE_URL, a workspace of its own (AGENTCLI_WORKSPACE), a private home, no telemetry
(LANGGRAPH_CLI_NO_ANALYTICS) and no tracing; it keeps its .langgraph_api snapshot, and its
home the call journal (agentcli's threads.db), in `base`: `serve` again on the same `base`
restarts it on the same data, as after a crash (`DevServer.kill`).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.helpers import ROOT
from tests.helpers.environment import isolated_env
from tests.helpers.ports import reserved_port
from tests.helpers.scripted_server import ScriptedServer
from tests.helpers.waiting import NeverHappened, until

LANGGRAPH = str(Path(sys.executable).parent / "langgraph")
STARTUP_SECONDS = 120  # it imports the graph's whole stack: slow on a busy machine


@dataclass
class DevServer:
    url: str
    model: ScriptedServer
    workspace: Path  # the server's AGENTCLI_WORKSPACE
    log: Path
    proc: subprocess.Popen[bytes]

    def kill(self) -> None:
        """SIGKILL: the server stops at once, saving nothing more."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


class NotStarted(RuntimeError):
    """langgraph dev exited, or did not answer in time; the message ends with its log."""


@contextmanager
def serve(base: Path, model: ScriptedServer | None = None) -> Iterator[DevServer]:
    """langgraph dev on `base`'s data (a restart if it ran there before); its own scripted
    model server unless given one."""
    workspace = base / "server-workspace"
    workspace.mkdir(exist_ok=True)
    env = isolated_env(base / "home")
    env.update(
        AGENTCLI_MODEL="scripted",
        AGENTCLI_WORKSPACE=str(workspace),
        LANGGRAPH_CLI_NO_ANALYTICS="1",  # no telemetry: nothing leaves 127.0.0.1
        LANGSMITH_TRACING="false",
    )
    port = reserved_port()
    log = base / "langgraph-dev.log"
    with ExitStack() as stack:
        if model is None:
            model = stack.enter_context(ScriptedServer())
        out = stack.enter_context(log.open("a"))
        env["OPENAI_BASE_URL"] = model.base_url
        command = [LANGGRAPH, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
        command += ["--port", str(port), "--config", str(ROOT / "langgraph.json")]
        proc = subprocess.Popen(command, cwd=base, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_ready(url, proc, log)
            yield DevServer(url, model, workspace, log, proc)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    try:
        until(lambda: _answers(url), what="langgraph dev", timeout=STARTUP_SECONDS, process=proc)
    except NeverHappened as exc:
        raise NotStarted(f"{exc}:\n{log.read_text()}") from None


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ok", timeout=5).status_code == 200
    except httpx.TransportError:
        return False
