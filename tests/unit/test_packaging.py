"""What a non-editable install ships: every package of the source tree, and the tool library
under its own name (`agentcli_tools`), never as a top-level `tools`."""

from __future__ import annotations

import tomllib

from tests.helpers import ROOT


def package_folders(source: str, name: str) -> set[str]:
    """The packages under ROOT/source, named as installed (`name` for the folder itself); a
    folder of modules without an __init__.py would not be installed, so it fails here."""
    folders = set()
    for module in (ROOT / source).rglob("*.py"):
        folder = module.parent
        assert (folder / "__init__.py").exists(), f"{folder} holds modules but no __init__.py"
        folders.add(".".join((name, *folder.relative_to(ROOT / source).parts)))
    return folders


def test_every_package_folder_is_listed_for_setuptools() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    folders = package_folders("agentcli", "agentcli") | package_folders("tools", "agentcli_tools")
    assert folders - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - folders == set(), "these are listed but hold no modules"
    assert config["package-dir"] == {"agentcli_tools": "tools"}


def test_the_tool_library_never_imports_itself_as_tools() -> None:
    """Relative imports inside tools/: an absolute `tools.x` would find the user's own folder."""
    for path in (ROOT / "tools").rglob("*.py"):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            stripped = text.strip()
            assert not stripped.startswith(("from tools", "import tools")), (path, number)
