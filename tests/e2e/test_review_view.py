"""The review shows everything (issue 14, items 3 and 4): `v` opens the whole call in $PAGER,
inline edits start from the arguments, the narrow panel keeps its borders and diff marks, and
a call that will fail goes back to the model before anyone is asked."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pexpect
import pyte
import pytest

from agentcli.terminal_text import unmark
from tests.e2e.conftest import AGENTCLI, Agent
from tests.helpers.pty_spawn import Spawn
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import EDITED_CHOICE, leave

CHOICE = r"\[a\]pprove.*\[v\]iew all.*\[q\]uit >"  # the choice line, [v]iew all in it
HOSTILE = "\x1b[2J\x1b]0;title\x07\u202eevil"  # clear screen, window title, bidi override
SGR = re.compile(r"\x1b\[[0-9;]*m")


def recording_pager(tmp_path: Path, name: str = "pager") -> tuple[Path, Path]:
    """An executable that saves what it reads on stdin (and its arguments) and exits."""
    script, record = tmp_path / "bin" / name, tmp_path / f"{name}.got"
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        f"#!{sys.executable}\nimport sys, json\n"
        f"data = sys.stdin.buffer.read()\n"
        f"open({str(record)!r}, 'wb').write(data)\n"
        f"open({str(record)!r} + '.argv', 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, record


def big_write(agent: Agent) -> None:
    """A 300-line rewrite of a file: more than the panel shows."""
    (agent.workspace / "big.txt").write_text("".join(f"old {i}\n" for i in range(300)))
    content = "".join(f"new {i}\n" for i in range(299)) + f"last {HOSTILE}\n"
    agent.server.push(
        tool_calls(("write_file", {"path": "big.txt", "content": content})), text("Rewritten.")
    )


def test_v_shows_the_whole_diff_in_the_pager_and_returns_to_the_choice(
    agent: Agent, tmp_path: Path
) -> None:
    pager, record = recording_pager(tmp_path)
    big_write(agent)
    child = agent.spawn("chat", "rewrite big.txt", env={"PAGER": f"{pager} --flag"})
    child.expect("more lines: v at the review shows them all")
    child.expect(CHOICE)
    child.sendline("v")
    child.expect(CHOICE)  # back at the choice, nothing decided
    got = record.read_bytes().decode("utf-8")
    assert json.loads(Path(f"{record}.argv").read_text()) == ["--flag"]
    assert "\x1b" not in got and "\u202e" not in got  # plain, and every unsafe char a mark
    plain = unmark(got)
    for i in range(300):
        assert f"-old {i}" in plain and (f"+new {i}" in plain or i == 299)
    assert f"+last {HOSTILE}" in plain and "more lines" not in got
    assert (agent.workspace / "big.txt").read_text().startswith("old 0")  # nothing ran
    child.sendline("a")
    child.expect("Rewritten.")
    leave(child)
    assert (agent.workspace / "big.txt").read_text().startswith("new 0")


def test_less_dash_r_gets_colour_and_nothing_but_colour(agent: Agent, tmp_path: Path) -> None:
    pager, record = recording_pager(tmp_path, "less")  # named less, so shown colour
    big_write(agent)
    child = agent.spawn("chat", "rewrite big.txt", env={"PAGER": f"{pager} -FR", "NO_COLOR": ""})
    child.expect(CHOICE)
    child.sendline("v")
    child.expect(CHOICE)
    got = record.read_bytes().decode("utf-8")
    assert SGR.search(got)  # coloured
    assert "\x1b" not in SGR.sub("", got)  # and no other escape: the hostile ones are marks
    assert f"+last {HOSTILE}" in unmark(SGR.sub("", got))
    child.sendeof()  # Ctrl-D leaves
    child.expect(pexpect.EOF)


@pytest.mark.skipif(shutil.which("less") is None, reason="less is not installed")
def test_a_real_less_shows_the_diff_and_gives_the_choice_back(agent: Agent) -> None:
    big_write(agent)
    env = {"PAGER": "", "LESS": "", "LESSSECURE": "1"}  # the default: less -R
    child = agent.spawn("chat", "rewrite big.txt", env=env)
    child.expect(CHOICE)
    child.sendline("v")
    child.expect("-old 0")  # less shows the top of the diff
    child.send("G")  # its end, past what the panel showed
    child.expect(r"last .*evil")
    child.send("q")
    child.expect(CHOICE)
    child.sendline("r")
    child.expect("Rewritten.")
    leave(child)
    assert (agent.workspace / "big.txt").read_text().startswith("old 0")


def test_inline_edit_starts_from_the_json_and_keeps_a_refused_edit(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("shell", {"command": "echo one\u202e"})), text("Ran it."), text("ok")
    )
    child = agent.spawn("chat", "run something")
    child.expect(CHOICE)
    child.sendline("e")
    # prefilled, and the bidi override shown as its JSON escape, not applied
    child.expect_exact('new arguments as JSON > {"command": "echo one\\u202e"}')
    typed = '"echo one\\u202e"}'
    child.send("\x08" * len(typed) + '"echo two"\r')  # the closing brace left out
    child.expect("edit refused: not valid JSON")
    child.expect_exact('new arguments as JSON > {"command": "echo two"')  # kept, as typed
    child.send("}\r")
    child.expect(EDITED_CHOICE)
    child.send("a")
    child.expect("Ran it.")
    leave(child)
    sent = agent.server.requests[1]["messages"]
    ran = next(m for m in sent if m["role"] == "assistant")["tool_calls"][0]["function"]
    assert json.loads(ran["arguments"]) == {"command": "echo two"}


def test_the_narrow_panel_keeps_its_borders_and_diff_marks(agent: Agent) -> None:
    long_add = "added " + "x" * 70 + " end"
    long_del = "removed " + "y" * 70 + " end"
    (agent.workspace / "n.txt").write_text(f"same\n{long_del}\n")
    content = f"same\n{long_add}\n\tz\u202e\n"
    agent.server.push(tool_calls(("write_file", {"path": "n.txt", "content": content})))
    rows, cols = 60, 40
    env = {**agent.env, "COLUMNS": str(cols), "LINES": str(rows)}
    child = Spawn(
        AGENTCLI,
        ["chat", "write n.txt"],
        env=env,
        cwd=str(agent.workspace),
        encoding="utf-8",
        timeout=120,  # what an expect allows: a cold start, far above an idle machine's 2 s
        dimensions=(rows, cols),
    )
    screen, stream = pyte.Screen(cols, rows), pyte.Stream()
    stream.attach(screen)
    child.expect(CHOICE)
    stream.feed(child.before + child.after)
    shown = list(screen.display)
    top = max(i for i, row in enumerate(shown) if row.startswith("╭"))
    bottom = next(i for i in range(top, rows) if shown[i].startswith("╰"))
    assert shown[top].rstrip().endswith("╮") and shown[bottom].rstrip().endswith("╯")
    body = shown[top + 1 : bottom]
    assert all(row.startswith("│ ") and row.rstrip().endswith("│") for row in body), body
    inner = [row[2:].rstrip()[:-1].rstrip() for row in body]
    added = [i for i, row in enumerate(inner) if re.match(r"\d+ \+added", row)][0]
    removed = [i for i, row in enumerate(inner) if re.match(r"\d+ -removed", row)][0]
    for start, sign, tail in ((added, "+", "x end"), (removed, "-", "y end")):
        rows_of = [start]
        while not inner[rows_of[-1]].endswith(tail):
            rows_of.append(rows_of[-1] + 1)
        assert len(rows_of) >= 3  # it wrapped
        for row in rows_of[1:]:  # every continuation row: no number, the line's mark
            assert re.match(rf"\s+\{sign}", inner[row]), inner[row]
    joined = "".join(r.split(" ", 1)[1] if r[:1].isdigit() else r.strip()[1:] for r in inner)
    assert long_add in joined.replace("+added", "added")  # nothing of the line lost
    child.sendeof()  # Ctrl-D leaves
    child.expect(pexpect.EOF)


def test_calls_that_will_fail_go_back_to_the_model_unasked(agent: Agent, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, agent.workspace / "away")
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "../escape.txt", "content": "x"}),
            ("write_file", {"path": "away/through-link.txt", "content": "x"}),
            ("read_file", {"path": "/etc/hostname"}),
            ("fetch_url", {"url": "http://127.0.0.1:9/admin"}),
            ("fetch_url", {"url": "http://[::ffff:10.0.0.1]/"}),
        ),
        text("I will stay inside."),
    )
    child = agent.spawn("chat", "do it")
    index = child.expect([CHOICE, "I will stay inside."])
    assert index == 1, "a call that will fail was shown for review"
    shown = re.sub(r"\s+", " ", child.before)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert not (tmp_path / "escape.txt").exists() and not (outside / "through-link.txt").exists()
    results = {
        m["tool_call_id"]: m["content"]
        for m in agent.server.requests[1]["messages"]
        if m["role"] == "tool"
    }
    assert len(results) == 5
    for number in (1, 2, 3):
        content = results[f"call_{number}"]
        assert "outside the workspace" in content and "--workspace" in content, content
    for number, address in ((4, "127.0.0.1"), (5, "10.0.0.1")):
        content = results[f"call_{number}"]
        assert address in content and "[tools] allow_private_urls" in content, content
        assert content.endswith("correct it and call again.")
    # the person sees the whole reason too, the setting named, not cut
    assert shown.count("[tools] allow_private_urls") == 2, shown
    assert "(the setting [tools] allow_private_urls in the config file is false)" in shown
