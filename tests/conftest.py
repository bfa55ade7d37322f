"""Shared fixtures: every test gets its own config and data folders, never the user's.

Tests marked `@pytest.mark.backends` run twice: on SQLite and on PostgreSQL (a private
server started once per session, a fresh database per test). Without PostgreSQL installed
those runs skip, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers.installed import missing
from tests.helpers.pg import Cluster, start_cluster

BACKENDS = ("sqlite", "postgres")

# the tests' folders (workspaces, homes) live where a person's do, not in /tmp: a confined
# command sees /tmp as its private temp folder, so a home under /tmp would not be there for
# it (tests/e2e/test_sandbox.py checks a workspace in /tmp on purpose)
if os.path.isdir("/var/tmp") and os.access("/var/tmp", os.W_OK):
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", "/var/tmp")

# every agentcli the tests start, and the test workers, keep compiled bytecode in one cache of
# the checkout's (ignored by git): with PYTHONDONTWRITEBYTECODE set, as CI machines often
# have it, each of the suite's thousands of starts would compile agentcli's modules again
# (a quarter of a start's CPU)
_BYTECODE = Path(__file__).resolve().parent.parent / ".pyc-cache"
os.environ["PYTHONPYCACHEPREFIX"] = str(_BYTECODE)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.pycache_prefix, sys.dont_write_bytecode = str(_BYTECODE), False

# properties are judged on what they find, not on how long an example takes: on a loaded
# 2-core machine (CI runs two workers a core) hypothesis's 200 ms deadline fails at random
settings.register_profile("agentcli", deadline=None)
settings.load_profile("agentcli")


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AGENTCLI_CONFIG",
        "AGENTCLI_DB",
        "AGENTCLI_MODEL",
        "VISUAL",
        "EDITOR",
        "AGENTCLI_DEBUG",
    ):
        monkeypatch.delenv(name, raising=False)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. The suite is bound by CPU, and each worker pays its
    own collection (about 9 s of CPU) and warm start, so four a core took longer
    (bench/README.md, suite_cpu.py). That the suite holds at four a core, every wait on a
    condition, is shown by running it so: `pytest -n 8` on 2 cores."""
    return 2 * (os.cpu_count() or 1)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "backends: run on SQLite and on PostgreSQL")
    config.addinivalue_line(
        "markers", "slow: left out of the default run (CI); `pytest -m slow` runs them"
    )
    config.addinivalue_line(
        "markers",
        "realmodel: against a real model server (tests/realmodel/run.sh); not in the default run",
    )
    config.addinivalue_line("markers", "window: the scripted server's context window (e2e)")
    config.addinivalue_line("markers", "llama: which real model server (tests/realmodel)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("backends") and "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """sqlite, unless the test is marked `backends` (then each in turn)."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        cluster = start_cluster()
    except RuntimeError as exc:
        missing("postgresql", str(exc))
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A fresh, empty PostgreSQL database."""
    return pg_cluster.new_database()


@pytest.fixture
def database(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """What `storage.db` names for this test: a SQLite file, or a PostgreSQL URL."""
    if backend == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "threads.db")


pytest_plugins = ["tests.helpers.tooling"]  # tool_env: run a tool the way ToolNode does
