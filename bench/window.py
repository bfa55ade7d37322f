"""A 20-turn tool-using thread in a 2,048-token window (issue 29, item 1), and the fixed
part of every request by mode and tool set.

One Session (SQLite, the built-in tools, auto-approve) drives one thread through the real
client against tests/helpers/scripted_server.py with `context_window=2048`, told at /props
as llama-server tells it. The server counts each request with a real tokenizer on the
prompt a ChatML template makes of it (tests/helpers/template_tokens.py): cl100k_base, or
with `--gguf PYTHON GGUF` SmolLM2's own tokenizer (about 12% more tokens), and refuses a
request over the window with 400 context_length_exceeded, as a real server does. Each turn
the person asks about a file, the model reads it (read_file or list_dir: core tools, so
offered in any window that offers a tool) and answers; summary requests are answered by the
server on its own. Run in both tool-call modes: native (`tools` sent) and text (the tools
described in the system prompt, calls written as `<tool_call>` blocks).

    .venv/bin/python bench/window.py             # 20 turns, both modes
    .venv/bin/python bench/window.py --quick     # 6 turns
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import machine, table

from agentcli.agent.agent_graph import SYSTEM
from agentcli.agent.context.compaction import SUMMARISE, Budget
from agentcli.agent.context.fixed_part import CORE, offer, schema_of
from agentcli.config import Settings
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.sqlite_backend import SqliteStore
from tests.helpers.scripted_server import Reply, ScriptedServer, text, tool_calls
from tests.helpers.template_tokens import GGUFTokenizer, cl100k

WINDOW = 2048


def summariser(body: dict) -> Reply | None:
    if body["messages"][0]["content"] != SUMMARISE:
        return None
    turns = sorted(set(re.findall(r"turn (\d+)", body["messages"][1]["content"])), key=int)
    return text(f"The user asked about the files of turns {', '.join(turns[-12:])}; each was read.")


def call(name: str, args: dict[str, Any], textual: bool) -> Reply:
    if not textual:
        return tool_calls((name, args))
    block = json.dumps({"name": name, "arguments": args})
    return text(f"<tool_call>\n{block}\n</tool_call>")


def thread(turns: int, textual: bool, home: Path, count: Callable[[dict], int]) -> dict[str, Any]:
    """`turns` turns of one thread; what the server counted of each request."""
    with ScriptedServer(context_window=WINDOW, count=count) as server:
        server.responders.append(summariser)
        work = home / ("text" if textual else "native")
        (work / "notes").mkdir(parents=True)
        for n in range(1, turns + 1):  # about 200 tokens each
            (work / "notes" / f"day{n}.txt").write_text(f"day {n}: the river was calm.\n" * 25)
        settings = Settings(
            db=str(work / "threads.db"), model="scripted", base_url=server.base_url,
            api_key="bench", tool_calls="text" if textual else "auto",
        )  # fmt: skip
        session = Session(
            settings, SqliteStore(work / "threads.db"), Policy.build(auto_approve=True),
            workspace=work,
        )  # fmt: skip
        fixed = session.fixed_part()
        for n in range(1, turns + 1):
            if n % 4 == 0:
                server.push(call("list_dir", {"path": "notes"}, textual))
            else:
                server.push(call("read_file", {"path": f"notes/day{n}.txt"}, textual))
            server.push(text(f"In turn {n}, the notes say the river was calm. " * 4))
            events = list(session.send(f"Turn {n}: what do my notes for day {n} say? Be brief."))
            assert events[-1].status == "done", events[-1]
        session.store.close()
        sizes = [body.get("_counted", count(body)) for body in server.requests]
        summaries = sum(b["messages"][0]["content"] == SUMMARISE for b in server.requests)
        return {
            "requests": len(sizes),
            "biggest": max(sizes),
            "over": sum(size > WINDOW for size in sizes),
            "summaries": summaries,
            "offered": fixed.names if fixed else [],
            "fixed": fixed.fixed if fixed else 0,
        }


def fixed_costs(count: Callable[[dict], int]) -> list[list[Any]]:
    """The fixed part by mode and tool set: agentcli's estimate, and the server's count of
    a request with that system prompt and those tools and an empty user message."""
    from agentcli_tools.registry import BUILTIN_TOOLS

    from agentcli.agent.text_calls.prompt import describe

    prompt = SYSTEM.format(workspace="/home/me/project")
    schemas = [schema_of(tool) for tool in BUILTIN_TOOLS.values()]
    allowance = Budget(WINDOW).fixed_tokens
    rows = []
    for textual in (False, True):
        sets = {
            "8 tools, full": ("full", 10**6),
            "8 tools, terse": ("terse", 10**6),
            f"what a {WINDOW:,} window offers": ("auto", allowance),
        }
        for label, (form, room) in sets.items():
            chosen = offer(prompt, schemas, allowance=room, window=WINDOW, core=CORE,
                           descriptions=form, textual=textual)  # fmt: skip
            body: dict[str, Any] = {"messages": [{"role": "system", "content": prompt}]}
            if textual:
                body["messages"][0]["content"] += "\n\n" + describe(chosen.schemas)
            else:
                body["tools"] = chosen.schemas
            body["messages"].append({"role": "user", "content": ""})
            names = ", ".join(chosen.names) if len(chosen.names) < 8 else "all"
            mode = "text" if textual else "native"
            rows.append([f"{mode}: {label} ({names})", chosen.fixed, count(body)])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 turns")
    parser.add_argument("--gguf", nargs=2, metavar=("PYTHON", "GGUF"), help="the model's tokenizer")
    args = parser.parse_args()
    turns = 6 if args.quick else 20
    count: Callable[[dict], int] = GGUFTokenizer(*args.gguf) if args.gguf else cl100k
    name = "the GGUF's tokenizer" if args.gguf else "cl100k_base"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ.update(XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "c"))
        runs = {mode: thread(turns, mode == "text", home, count) for mode in ("native", "text")}
        costs = fixed_costs(count)
    print(f"{turns} tool-using turns, {WINDOW}-token window, counted with {name}; {machine()}\n")
    keys = [
        ("tools offered", "count"), ("fixed part (agentcli's estimate)", "fixed"),
        ("model requests", "requests"), ("summary requests", "summaries"),
        ("largest request (tokens)", "biggest"), (f"requests over {WINDOW:,}", "over"),
    ]  # fmt: skip
    for run in runs.values():
        run["count"] = len(run["offered"])
    rows = [[label, *(runs[m][key] for m in runs)] for label, key in keys]
    print(table(["", "native", "text"], rows))
    for mode, run in runs.items():
        print(f"\n{mode}: offered {', '.join(run['offered'])}")
    print()
    print(table(["mode: tool set", "agentcli's estimate", f"server's count ({name})"], costs))
    if args.gguf:
        count.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
