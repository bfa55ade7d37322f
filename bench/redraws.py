"""What the chat writes to a terminal for a streamed answer: redraws, cursor-ups, bytes.

`agentcli chat` runs in a pseudo-terminal (pexpect, 40 x 120, colour) against the scripted
model server (tests/helpers/scripted_server.py), which streams a 15 KB Markdown answer
(headings, paragraphs, a list, a 60-line code block) in 4-character pieces, --delay seconds
apart. Everything the chat writes until its prompt comes back is counted:

- cursor-ups: `ESC[nA` sequences, and the rows they move (each is a redraw's way back up);
- synchronized updates: `ESC[?2026h` ... `ESC[?2026l` pairs (a terminal that knows mode 2026
  paints each one whole);
- bytes.

    .venv/bin/python bench/redraws.py                     # this checkout's agentcli
    .venv/bin/python bench/redraws.py --agentcli OTHER    # another install (before/after)

Counts depend on the stream's pace (a redraw at most every so often), so both are run
with the same --delay; medians of --rounds.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

import pexpect
from _common import AGENTCLI, cli_env, machine, median, table

from tests.helpers.scripted_server import ScriptedServer, text

UP = re.compile(rb"\x1b\[(\d*)A")


def answer() -> str:
    """A 15 KB answer as a model writes one."""
    parts = []
    for section in range(19):
        parts.append(f"## Step {section + 1}: what to change\n\n")
        parts.append(
            "The function reads the file once and keeps the lines in memory, so the "
            "**second** pass costs nothing; `parse()` then splits each line on tabs. "
            "This matters when the file is large, as the first version read it twice.\n\n"
        )
        parts += [
            f"- item {i}: check that `value_{i}` is set before it is read\n" for i in range(8)
        ]
        parts.append("\n")
    parts.append("```python\n")
    parts += [f"def step_{i}(values):\n    return sum(values) * {i}\n" for i in range(30)]
    parts.append("```\n\nThat is all.\n")
    return "".join(parts)


def once(agentcli: str, delay: float) -> dict[str, float]:
    with ScriptedServer() as server, tempfile.TemporaryDirectory() as tmp:
        body = answer()
        server.push(text(body, delay=delay))
        env = cli_env(Path(tmp) / "home", server.base_url)
        env.pop("NO_COLOR")
        env["TERM"] = "xterm-256color"
        work = Path(tmp) / "work"
        work.mkdir()
        child = pexpect.spawn(
            agentcli, ["chat"], env=env, cwd=str(work), timeout=300, dimensions=(40, 120)
        )
        child.expect("you>")
        child.sendline("explain")
        start = time.perf_counter()
        child.expect(r"That is all\.")
        seen = child.before + child.after
        child.expect("you>")
        seen += child.before + child.after
        seconds = time.perf_counter() - start
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        ups = UP.findall(seen)
        return {
            "chars": len(body),
            "s": seconds,
            "cursor-ups": len(ups),
            "rows up": sum(int(n or 1) for n in ups),
            "2026 pairs": min(seen.count(b"\x1b[?2026h"), seen.count(b"\x1b[?2026l")),
            "bytes": len(seen),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agentcli", default=AGENTCLI)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--delay", type=float, default=0.002, help="seconds between pieces")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    runs = [once(args.agentcli, args.delay) for _ in range(rounds)]
    keys = list(runs[0])
    row = ["`agentcli chat`, a 15 KB answer"] + [
        f"{median([r[k] for r in runs]):.1f}" if k == "s" else int(median([r[k] for r in runs]))
        for k in keys
    ]
    pace = f"pieces of 4 characters, {args.delay * 1000:g} ms apart"
    print(f"{machine()}; {pace}; medians of {rounds}")
    print(f"agentcli: {args.agentcli}")
    print(table(["command", *keys], [row]))


if __name__ == "__main__":
    main()
