"""What reaches the terminal (issue 13, item 5): the review shows exactly the bytes that run,
and no untrusted text reaches stdout or stderr as terminal codes.

The review test plays the chat in a real pseudo-terminal and feeds everything it writes to
a terminal emulator (pyte) of the same size; at each review it reads the panel off the
emulated screen, turns the marks back into characters (agentcli.visible.unmark) and
requires exactly the command the model sent, which then runs once approved. A payload that
reached the terminal raw would move the cursor, erase, overwrite or hide, and the screen
would read back differently.
"""

from __future__ import annotations

import json
import re

import pexpect
import pyte
import pytest

from agentcli.visible import unmark
from tests.e2e.conftest import Agent
from tests.scripted_server import error, text, tool_calls

ROWS, COLS = 120, 120
CHOICE = r"\[a\]pprove.*\[q\]uit >"
PROMPT = "you>"

# Shell commands as a hostile model would write them: each hides, overwrites or disguises
# part of itself on a terminal that obeys it. All are harmless when they run.
PAYLOADS = [
    "git status\rtouch PWNED_cr",  # carriage return: the second half overwrites the first
    "touch PWNED_el\r\x1b[2Kgit status",  # erase line, then the decoy
    "touch PWNED_up\n\x1b[1A\x1b[2Kgit status",  # cursor up over the real line
    "git status \x1b[8mtouch PWNED_hidden\x1b[0m",  # concealed text
    "touch PWNED_bs" + "\b" * 14 + "git status    ",  # backspaces over it
    "echo \u202efr- mr\u202c PWNED_bidi",  # right-to-left override: reads as rm -rf
    "r\u200dm -f PWNED_zwj",  # zero-width joiner inside a word
    "echo \u200b\u200c\u200d\u2060\ufeff zero-width",
    "echo \x1b]0;fake title\x07 osc0",  # window title
    "echo \x1b]52;c;dG91Y2ggUFdORUQ=\x07 osc52",  # clipboard write
    "echo \x1b]8;;http://evil.example/\x1b\\git status\x1b]8;;\x1b\\ osc8",  # hyperlink
    "echo \x9b2K c1 csi",  # 8-bit CSI
    "echo \x9d0;title\x9c c1 osc",
    "echo " + "a" * 300 + " PWNED_long",  # wraps over several rows
    "git status" + " " * 200 + "; touch PWNED_spaces",  # pushed off to the right
    "git status   ",  # trailing blanks
    "echo a\n\n\n\ntouch PWNED_newlines",
    "echo \x7f del",
    "echo \u2028 line sep \u2029 para sep",
    "echo \ufe0f\U000e0041\U000e007f tags",
    "echo ⟦ESC⟧[2K fake mark",  # text posing as one of agentcli's marks
    "echo [bold red]markup[/] [link=http://x]y[/link]",  # Rich markup
    "echo \x1b[31mred\x1b[0m",
    "echo \x1b[?1049h alt screen \x1b[?1049l",
    "echo \x1bc reset",
    "echo \x1b[2J\x1b[H clear",
    "echo \x0b vt \x0c ff",
    "echo \x1b7save\x1b8restore",
    "echo \u2066isolate\u2069 \u061c alm",
    "echo \u00a0nbsp\u3000ideographic",
    "echo \u3164 hangul filler",
    "echo\ttab",
    "echo :warning: emoji code",
    "echo \x1bP+q\x1b\\ dcs",
    "echo \x1b[3;4H moved \x1b[10C right",
    "echo '\x1b[A\x1b[A\x1b[A' && touch PWNED_upmany",
]


def screen_of(child: pexpect.spawn, screen: pyte.Screen, stream: pyte.Stream) -> list[str]:
    stream.feed(child.before + child.after)
    return list(screen.display)


def panel_text(rows: list[str], multiline: bool) -> str:
    """The last review panel on the screen, read back: borders, line numbers and wraps
    taken off, then the marks turned back into characters."""
    top = max(i for i, row in enumerate(rows) if row.startswith("╭─"))
    bottom = next(i for i in range(top, len(rows)) if rows[i].startswith("╰"))
    body = [
        row.rstrip()[2:-2] if row.rstrip().endswith("│") else row for row in rows[top + 1 : bottom]
    ]
    width = COLS - 4
    lines: list[str] = []
    gutter = 0
    if multiline:
        gutter = next(len(m.group()) for b in body if (m := re.match(r"\s*\d+ ", b)))
    for row in body:
        label, content = row[:gutter], row[gutter:]
        if not lines or label.strip():
            lines.append(content)
        else:
            lines[-1] = lines[-1].ljust(width - gutter) + content
    return unmark("\n".join(line.rstrip(" ") for line in lines))


@pytest.mark.parametrize("colour", [False, True], ids=["no-colour", "colour"])
def test_the_review_shows_exactly_what_runs(agent: Agent, colour: bool) -> None:
    calls = [("shell", {"command": command}) for command in PAYLOADS]
    agent.server.push(tool_calls(*calls), text("all done"))
    env = {"NO_COLOR": ""} if colour else {}
    child = agent.spawn("chat", env=env)
    child.setwinsize(ROWS, COLS)
    screen = pyte.Screen(COLS, ROWS)
    stream = pyte.Stream(screen)
    child.expect(PROMPT)
    stream.feed(child.before + child.after)
    child.sendline("check the repo")
    shown = []
    for command in PAYLOADS:
        child.expect(CHOICE)
        rows = screen_of(child, screen, stream)
        shown.append(panel_text(rows, "\n" in command))
        child.sendline("a")
    child.expect("all done")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(r"agentcli resume (\w+)")
    thread = child.match.group(1)
    child.expect(pexpect.EOF)
    wrong = [(c, s) for c, s in zip(PAYLOADS, shown, strict=True) if c != s]
    assert not wrong, f"{len(wrong)} of {len(PAYLOADS)} reviews showed something else: {wrong}"
    # and what was approved is what ran: each call approved, run, with those arguments
    show = agent.run("threads", "show", thread, "--json")
    ran = [c for e in json.loads(show.stdout)["entries"] for c in e.get("calls", [])]
    assert [c["args"]["command"] for c in ran] == PAYLOADS
    assert all(c["decision"]["decision"] == "approved" and c["result"] is not None for c in ran)
    assert (agent.workspace / "PWNED_long").exists() is False  # echo only: nothing else ran
    assert (agent.workspace / "PWNED_up").exists()  # it was shown, approved, and ran


# ---------------------------------------------------------------------------------------
# The sweep: hostile text from every untrusted source, through every command that prints.

HOSTILE = (
    "\x1b[2K\x1b]0;T\x07\x1b]52;c;eA==\x07\r\b\x9b31m\x9d0;x\x9c\u202e\u2066\u200b"
    "\ufeff\u2028\U000e0041\x7f\x85\x1b[?1049h[bold]x[/] end"
)
# The characters none of the output may carry raw (\n and \t aside).
RAW = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069"
    "\ufeff\ufe00-\ufe0f\U000e0000-\U000e007f\ud800-\udfff]"
)
SOURCES = [
    "model text",
    "file name",
    "file content",
    "shell output",
    "call id",
    "tool name",
    "title",
    "server error",
    "workspace path",
]
PAYLOADS_SWEEP = [
    HOSTILE,
    "\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\",
    "a\rb\x08c\x0bd\x0ce\x00f",
    "\u202d\u202c\u2067\u2068\u2069\u200e\u200f\u061c",
]


def clean(output: str | bytes) -> list[str]:
    text = output.decode("utf-8") if isinstance(output, bytes) else output
    return sorted({hex(ord(c)) for c in RAW.findall(text)})


@pytest.mark.parametrize("payload", PAYLOADS_SWEEP, ids=range(len(PAYLOADS_SWEEP)))
def test_no_raw_control_reaches_the_terminal(agent: Agent, payload: str) -> None:
    fs_safe = payload.replace("\x00", "").replace("/", "")
    (agent.workspace / f"evil{fs_safe}.txt").write_text(payload)
    agent.server._call_ids = iter(f"{i}{payload}" for i in range(100))  # hostile call ids
    agent.server.push(
        tool_calls(
            ("list_dir", {"path": "."}),
            ("read_file", {"path": f"evil{fs_safe}.txt"}),
            ("shell", {"command": f"printf '%s' {json.dumps(fs_safe)}"}),
            (f"nosuch{payload}", {"x": payload}),
            content=payload,
        ),
        text(payload),
    )
    outputs = {}
    message = payload.replace("\x00", "") + " title"
    done = agent.run("run", "-y", message)
    assert done.returncode == 0, done.stderr
    outputs["run"] = done
    thread = json.loads(agent.run("threads", "list", "--json").stdout)[0]["thread_id"]
    for args in (
        ("threads", "list"),
        ("threads", "show", thread),
        ("threads", "export", thread, "--format", "md"),
        ("threads", "history", thread),
    ):
        outputs[" ".join(args[:2])] = agent.run(*args)
    # a call left for review: `run` lists it, `review ID` lists it
    agent.server.push(tool_calls(("shell", {"command": payload})))
    parked = agent.run("run", "--thread", thread, "again")
    assert parked.returncode == 3, parked.stderr
    outputs["run parked"] = parked
    outputs["review"] = agent.run("review", thread)
    assert agent.run("review", thread, "--reject", "all").returncode in (0, 1)
    # the server's error text, and a workspace whose name is hostile
    agent.server.push(error(400, payload))
    outputs["server error"] = agent.run("run", "--thread", thread, "more")
    odd = agent.workspace / f"ws{fs_safe}"
    odd.mkdir()
    agent.server.push(text("ok"))
    outputs["odd workspace"] = agent.run("run", "-w", str(odd), "hi")
    agent.run("threads", "rename", thread, message)
    outputs["list renamed"] = agent.run("threads", "list")
    leaks = {
        name: (clean(result.stdout), clean(result.stderr))
        for name, result in outputs.items()
        if clean(result.stdout) or clean(result.stderr)
    }
    assert not leaks, leaks
    # still useful: the text is there, its controls shown as marks
    assert "⟦ESC⟧" in outputs["threads show"].stdout or "⟦" in outputs["threads show"].stdout
    assert " title" in outputs["threads list"].stdout


LONE = "half \ud800 a surrogate"


@pytest.mark.parametrize("fmt", ["json", "jsonl", "text"])
def test_a_lone_surrogate_never_breaks_output(agent: Agent, fmt: str) -> None:
    agent.server.push(text(LONE))  # sent as the JSON escape "\ud800" in the stream
    result = agent.run("run", "-o", fmt, "hi")
    assert result.returncode == 0, result.stderr
    assert not clean(result.stdout)
    if fmt == "json":
        assert json.loads(result.stdout)["final"] == LONE
    elif fmt == "jsonl":
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert any(e.get("text") == LONE or e.get("final") == LONE for e in events)
    else:
        assert "half ⟦U+D800⟧ a surrogate" in result.stdout
    thread = json.loads(agent.run("threads", "list", "--json").stdout)[0]["thread_id"]
    exported = agent.run("threads", "export", thread, "--format", "json")
    assert exported.returncode == 0, exported.stderr
    # valid JSON, the message in it (LangGraph's serialiser stores the surrogate as "?")
    contents = [m["data"]["content"] for m in json.loads(exported.stdout)["messages"]]
    assert any(c.startswith("half ") and c.endswith(" a surrogate") for c in contents)


# ---------------------------------------------------------------------------------------
# In process: the function itself, the renderers that use it, and the Markdown export.

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from agentcli.visible import dumps, visible  # noqa: E402

ANY_TEXT = st.text(st.characters(codec=None), max_size=200)


@given(ANY_TEXT, st.booleans(), st.booleans())
def test_marks_are_one_to_one_and_leave_nothing_raw(text: str, multiline: bool, trailing: bool):
    shown = visible(text, multiline, trailing)
    assert unmark(shown) == text  # nothing lost, no text can pose as a mark
    assert not RAW.search(shown)
    assert multiline or ("\n" not in shown and "\t" not in shown)


@given(ANY_TEXT)
def test_plain_text_is_left_alone(text: str) -> None:
    plain = "".join(c for c in text if c.isascii() and c.isprintable())
    assert visible(plain) == plain


@given(st.recursive(ANY_TEXT, lambda inner: st.lists(inner) | st.dictionaries(ANY_TEXT, inner)))
def test_json_output_is_always_valid_and_exact(value: object) -> None:
    text = dumps(value, indent=2)
    text.encode("utf-8")  # never an encode error
    assert json.loads(text) == value


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_panel_renders_no_raw_control(payload: str) -> None:
    from rich.console import Console

    from agentcli.preview import Preview
    from agentcli.ui.render import call_panel

    for colour in ("truecolor", None):
        console = Console(width=60, color_system=colour, force_terminal=True, record=False)
        with console.capture() as captured:
            console.print(call_panel(payload, Preview("shell", payload), 1, 1, payload))
        out = captured.get()
        # Rich's own SGR codes are the only escapes, and only with colour
        assert not RAW.search(re.sub(r"\x1b\[[0-9;]*m", "", out))
        assert "\x1b" not in out or colour


FENCE_BREAKERS = ["```\n# Injected heading\n```", "````\nx", "`", "a ``` b ```` c", "```json"]


@pytest.mark.parametrize("result", FENCE_BREAKERS)
def test_untrusted_text_cannot_leave_its_markdown_fence(result: str) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from agentcli.store import ThreadRow
    from agentcli.transcript import to_markdown

    call = {"id": "c1", "name": "read_file", "args": {"path": result}}
    values = {
        "messages": [
            HumanMessage("hi"),
            AIMessage("", tool_calls=[call]),
            ToolMessage(result, tool_call_id="c1"),
        ]
    }
    row = ThreadRow("t1", result, "idle", "now", "now", "/w", "m")
    text = to_markdown(row, values)
    from markdown_it import MarkdownIt  # CommonMark, as a reader's viewer parses it

    tokens = MarkdownIt().parse(text)
    headings = [t for t in tokens if t.type == "heading_open"]
    assert len(headings) == 1  # the title's; nothing injected
    blocks = [t.content for t in tokens if t.type == "fence"]
    assert blocks == [json.dumps(call["args"], ensure_ascii=False) + "\n", result + "\n"]
