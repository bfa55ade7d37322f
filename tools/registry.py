"""The built-in tools, by name, in the order they are offered to the model."""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.tools import BaseTool

from .calc import calculator
from .catalogue import select
from .dir_listing import list_dir
from .file_reading import read_file
from .file_writing import edit_file, write_file
from .search import search_files
from .shell import shell
from .web import fetch_url

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
    return [BUILTIN_TOOLS[name] for name in select(names)]
