"""The built-in tools, by name, in the order they are offered to the model."""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.tools import BaseTool

from tools.calc import calculator
from tools.files import edit_file, list_dir, read_file, write_file
from tools.search import search_files
from tools.shell import shell
from tools.web import fetch_url

BUILTIN_TOOLS: dict[str, BaseTool] = {
    tool.name: tool
    for tool in (
        read_file,
        write_file,
        edit_file,
        list_dir,
        search_files,
        shell,
        fetch_url,
        calculator,
    )
}


def builtin_tools(names: Iterable[str] | None = None) -> list[BaseTool]:
    """The built-in tools named in ``names`` (all of them if None), in registry order.

    Raises:
        ValueError: if a name is not a built-in tool; the message lists the known names.
    """
    if names is None:
        return list(BUILTIN_TOOLS.values())
    wanted = set(names)
    unknown = sorted(wanted - BUILTIN_TOOLS.keys())
    if unknown:
        raise ValueError(
            f"unknown tool(s): {', '.join(unknown)}; built-in tools: {', '.join(BUILTIN_TOOLS)}"
        )
    return [tool for name, tool in BUILTIN_TOOLS.items() if name in wanted]
