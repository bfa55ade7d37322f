"""The built-in tools' names and one-line summaries, in the order they are offered to the
model. Plain data: listing the tools (`agentcli tools`) needs no LangChain, which is slow to
import. tests/tools/test_registry.py keeps it equal to the registry.
"""

from __future__ import annotations

from collections.abc import Iterable

BUILTINS: dict[str, str] = {
    "read_file": "Read a text file from the workspace, with line numbers.",
    "write_file": "Write a text file in the workspace, replacing it if it exists.",
    "edit_file": "Replace one exact piece of text in a file of the workspace.",
    "list_dir": "List a directory of the workspace: folders first, then files, each sorted by"
    " name.",
    "search_files": "Search the text files under a path for a regular expression, like grep -rn.",
    "shell": "Run a bash command in the workspace and return its exit code and output.",
    "fetch_url": "Fetch a web page or text file over HTTP(S) and return its text.",
    "calculator": "Evaluate an arithmetic expression exactly like Python would, and return the"
    " result.",
}


def select(names: Iterable[str] | None = None) -> list[str]:
    """The built-in tool names in ``names`` (all of them if None), in catalogue order.

    Raises:
        ValueError: if a name is not a built-in tool; the message lists the known names.
    """
    if names is None:
        return list(BUILTINS)
    wanted = set(names)
    unknown = sorted(wanted - BUILTINS.keys())
    if unknown:
        raise ValueError(
            f"unknown tool(s): {', '.join(unknown)}; built-in tools: {', '.join(BUILTINS)}"
        )
    return [name for name in BUILTINS if name in wanted]
