"""The quick commands import nothing heavy (issue 8): timings live in bench/startup.py,
but which modules a command loads is exact, so it is checked here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "openai",
    "pydantic",
    "httpx",
    "prompt_toolkit",
    "rich.markdown",
    "pygments",
    "typer.rich_utils",
)

MODULES_AFTER = f"""
import sys
from agentcli.cli import main
sys.argv = ["agentcli", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print([m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)
"""


def heavy_imports(tmp_path: Path, *args: str, config: str = "") -> str:
    path = tmp_path / "config.toml"
    path.write_text(config)
    env = {
        "AGENTCLI_CONFIG": str(path),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.stdout, result.stderr
    return result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["run", "--help"],
        ["threads", "list"],
        ["threads", "list", "--json"],
        ["tools"],
        ["tools", "--json"],
        ["config", "show"],
    ],
)
def test_quick_commands_import_nothing_heavy(tmp_path: Path, args: list[str]) -> None:
    assert heavy_imports(tmp_path, *args) == "[]"


def test_the_check_sees_heavy_imports(tmp_path: Path) -> None:
    module = tmp_path / "mytools.py"
    module.write_text(
        "from langchain_core.tools import tool\n\n@tool\ndef hi() -> str:\n"
        '    """Say hi."""\n    return "hi"\n'
    )
    imported = heavy_imports(tmp_path, "tools", config=f"[tools]\nmodules = ['{module}']\n")
    assert "'langchain_core'" in imported and "'pydantic'" in imported
