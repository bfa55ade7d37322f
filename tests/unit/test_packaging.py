"""What a non-editable install ships: every package of the source tree, and the tool library
under its own name (`agentcli_tools`), never as a top-level `tools`."""

from __future__ import annotations

import tomllib

from tests.helpers import ROOT


def test_every_package_folder_is_listed_for_setuptools() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    folders = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "agentcli").rglob("__init__.py")
    }
    assert folders - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - folders == {"agentcli_tools"}
    assert config["package-dir"] == {"agentcli_tools": "tools"}


def test_the_tool_library_never_imports_itself_as_tools() -> None:
    """Relative imports inside tools/: an absolute `tools.x` would find the user's own folder."""
    for path in (ROOT / "tools").glob("*.py"):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            stripped = text.strip()
            assert not stripped.startswith(("from tools", "import tools")), (path, number)
