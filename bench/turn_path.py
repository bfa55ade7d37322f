"""The path of one approved `read_file` turn through agentcli's modules.

A Session in this process, a scripted chat model (tests/helpers/fakes.py) and the real
built-in tools: the message is sent, the call approved, the model answers. Every Python
call made meanwhile is traced (sys.setprofile, in every thread), and each call from one
agentcli module into another is counted. Printed: the modules visited, the pairs of modules
that call each other both ways, and the packages a turn visits.

    .venv/bin/python bench/turn_path.py [--list]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from _common import ROOT  # noqa: F401 (puts the checkout on sys.path)

from agentcli.agent.toolset.loading import load_tools
from agentcli.config import Settings
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say

OURS = ("agentcli", "agentcli_tools")


def _module(frame: Any) -> str | None:
    name = frame.f_globals.get("__name__", "")
    return name if name.split(".")[0] in OURS else None


def trace_turn() -> tuple[set[str], dict[tuple[str, str], int]]:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "a.txt").write_text("hello\n")
        os.environ["XDG_DATA_HOME"] = str(workspace / "data")  # snapshots, keys: not the user's
        settings = Settings(db=str(workspace / "threads.db"))
        model = FakeChatModel(replies=[call(("read_file", {"path": "a.txt"})), say("ok")], calls=[])
        tools = [item.tool for item in load_tools(settings, warn=lambda _: None)]
        session = Session(
            settings, open_store(settings), Policy(), workspace=workspace, model=model, tools=tools
        )
        session.prepare()
        visited: set[str] = set()
        calls: dict[tuple[str, str], int] = defaultdict(int)

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event != "call":
                return
            callee = _module(frame)
            if callee is None:
                return
            visited.add(callee)
            back = frame.f_back
            while back is not None and _module(back) is None:
                back = back.f_back  # through the libraries (LangGraph) to our caller
            caller = _module(back) if back is not None else None
            if caller and caller != callee:
                calls[(caller, callee)] += 1

        threading.setprofile(profile)
        sys.setprofile(profile)
        try:
            list(session.send("read a.txt"))
            list(session.decide([{"type": "approve"}]))
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
        return visited, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="name every module and pair")
    args = parser.parse_args()
    visited, calls = trace_turn()
    both = sorted({tuple(sorted(pair)) for pair in calls if pair[::-1] in calls})
    packages = sorted({".".join(m.split(".")[:2]) for m in visited})
    print(f"modules visited: {len(visited)}")
    print(f"pairs calling each other both ways: {len(both)}")
    print(f"packages: {len(packages)} ({', '.join(packages)})")
    if args.list:
        print("\nmodules:\n  " + "\n  ".join(sorted(visited)))
        print("\nboth ways:\n  " + "\n  ".join(f"{a} <-> {b}" for a, b in both))


if __name__ == "__main__":
    main()
