"""A 200-turn thread against a model with an 8k context window (issue 16, item 5).

One Session (SQLite, the built-in tools offered, auto-approve) drives one thread through the
real client (ChatOpenAI over HTTP) against tests/helpers/scripted_server.py with
`context_window=8192`: the server counts each request's tokens (the JSON of its messages
and tools, 4 bytes a token: not agentcli's estimate), refuses one over the window with 400
context_length_exceeded, and tells the window at /props as llama.cpp does, which is how
agentcli learns it. Every turn is a user message of about 150 tokens and an answer of about
110; every tenth turn the model first reads a file of about 3,000 tokens (read_file, a call
and its result). Summary requests are answered by the server on its own.

Compaction on: the window is asked of /props, as a user's session would. Compaction off
(`[context] compact = false`): the same turns against a server that refuses nothing, to show
the tokens a turn would carry without compaction (each one past 8,192 would be refused by a
real 8k model).

    .venv/bin/python bench/context.py            # 200 turns, both modes
    .venv/bin/python bench/context.py --quick    # 30 turns
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, table

from agentcli.agent.context.compaction import SUMMARISE
from agentcli.config import Settings
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.sqlite_backend import SqliteStore
from tests.helpers.scripted_server import Reply, ScriptedServer, request_tokens, text, tool_calls

WINDOW = 8192
REPORT_AT = (10, 100, 200)


def summariser(body: dict) -> Reply | None:
    if body["messages"][0]["content"] != SUMMARISE:
        return None
    numbers = sorted(set(re.findall(r"turn (\d+)", body["messages"][1]["content"])))
    return text(f"The user asked questions in turns {', '.join(numbers[-40:])}. " * 3)


def run(turns: int, compact: bool, home: Path) -> dict[str, Any]:
    window = WINDOW if compact else None
    with ScriptedServer(context_window=window) as server:
        server.responders.append(summariser)
        work = home / ("on" if compact else "off")
        work.mkdir()
        (work / "notes.txt").write_text("a line of notes in the file\n" * 430)  # ~3,000 tokens
        settings = Settings(
            db=str(work / "threads.db"),
            model="scripted",
            base_url=server.base_url,
            api_key="bench",
            compact=compact,
        )
        s = Session(
            settings,
            SqliteStore(work / "threads.db"),
            Policy.build(auto_approve=True),
            workspace=work,
        )
        sizes: list[int] = []  # prompt tokens of each turn's last request, by the server
        summaries = 0
        start = time.perf_counter()
        for turn in range(1, turns + 1):
            if turn % 10 == 0:
                server.push(tool_calls(("read_file", {"path": "notes.txt"})))
            server.push(text(f"Answer to turn {turn}: " + "it is fine. " * 36))
            before = len(server.requests)
            events = list(s.send(f"Question in turn {turn}: " + "how is it going? " * 35))
            assert events[-1].status == "done", events[-1]
            new = server.requests[before:]
            summaries += sum(body["messages"][0]["content"] == SUMMARISE for body in new)
            sizes.append(request_tokens(new[-1]))
        seconds = time.perf_counter() - start
        biggest = max(request_tokens(body) for body in server.requests)
        compaction = s.state().values.get("compaction")
        s.store.close()
        return {
            "sizes": sizes,
            "summaries": summaries,
            "biggest": biggest,
            "over": sum(request_tokens(body) > WINDOW for body in server.requests),
            "seconds": seconds,
            "first": next((i + 1 for i, n in enumerate(sizes) if n < max(sizes[:i] or [0])), None),
            "compaction": compaction,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 turns")
    args = parser.parse_args()
    turns = 30 if args.quick else 200
    at = [n for n in (10, 20, 30) if n <= turns] if args.quick else list(REPORT_AT)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ.update(XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "c"))
        on = run(turns, True, home)
        off = run(turns, False, home)
    rows = [[f"prompt tokens, turn {n}", on["sizes"][n - 1], off["sizes"][n - 1]] for n in at]
    after = on["sizes"][(on["first"] or 1) - 1 :]
    rows += [
        ["after the first compaction: min / median / max", _spread(after), "-"],
        ["largest request (tokens)", on["biggest"], off["biggest"]],
        [f"requests over the {WINDOW}-token window", on["over"], off["over"]],
        ["summary requests", on["summaries"], off["summaries"]],
        ["first turn smaller than one before it", on["first"] or "-", off["first"] or "-"],
        ["wall time (s)", round(on["seconds"], 1), round(off["seconds"], 1)],
    ]
    print(f"{turns} turns, {WINDOW}-token window; {machine()}\n")
    print(table(["", "compaction on", "compaction off"], rows))


def _spread(values: list[int]) -> str:
    ordered = sorted(values)
    return f"{ordered[0]} / {ordered[len(ordered) // 2]} / {ordered[-1]}"


if __name__ == "__main__":
    main()
