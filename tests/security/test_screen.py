"""What reaches the terminal (issue 13, item 5): the review shows exactly the bytes that run,
and no untrusted text reaches stdout or stderr as terminal codes.

The review test plays the chat in a real pseudo-terminal and feeds everything it writes to
a terminal emulator (pyte) of the same size; at each review it reads the panel off the
emulated screen, turns the marks back into characters (agentcli.terminal_text.unmark) and
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

from agentcli.terminal_text import unmark
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import error, text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT, leave

ROWS, COLS = 120, 120

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


def chat_on_screen(
    agent: Agent, env: dict[str, str]
) -> tuple[pexpect.spawn, pyte.Screen, pyte.Stream]:
    """A chat on an emulated ROWS x COLS terminal, its first message sent."""
    child = agent.spawn("chat", env=env)
    child.setwinsize(ROWS, COLS)
    screen = pyte.Screen(COLS, ROWS)
    stream = pyte.Stream(screen)
    child.expect(PROMPT)
    stream.feed(child.before + child.after)
    child.sendline("check the repo")
    return child, screen, stream


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
    child, screen, stream = chat_on_screen(agent, env)
    shown = []
    for command in PAYLOADS:
        child.expect(CHOICE)
        rows = screen_of(child, screen, stream)
        shown.append(panel_text(rows, "\n" in command))
        child.sendline("a")
    child.expect("all done")
    thread = leave(child)
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


# the first payload in every run; the others, each some 20 s of agentcli starts, with -m slow
SWEEP = [PAYLOADS_SWEEP[0], *(pytest.param(p, marks=pytest.mark.slow) for p in PAYLOADS_SWEEP[1:])]


@pytest.mark.parametrize("payload", SWEEP, ids=range(len(SWEEP)))
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


@pytest.mark.parametrize(
    "fmt", ["json", *(pytest.param(f, marks=pytest.mark.slow) for f in ("jsonl", "text"))]
)
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

from agentcli.terminal_text import dumps, visible  # noqa: E402

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

    from agentcli.ui.call_panel import call_panel
    from agentcli.ui.call_preview import Preview

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

    from agentcli.thread_rows import ThreadRow
    from agentcli.ui.markdown_export import to_markdown

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


# ---------------------------------------------------------------------------------------
# Round 2: characters that still printed raw, line breaks that were not in the bytes, a
# Markdown export and a chat view that hid or forged text.

from markdown_it.token import Token  # noqa: E402

from agentcli.terminal_text import DEFAULT_IGNORABLE, mark, unsafe  # noqa: E402
from agentcli.ui.markdown import parse_shown  # noqa: E402
from agentcli.ui.markdown_export import LANGUAGE  # noqa: E402

# Each hides in a command: the marked character must show as a mark, wherever it sits.
PAYLOADS_INVISIBLE = [
    "rm -rf ./build\u17b4",  # Khmer inherent vowels: zero-width
    "rm -rf ./build\u17b5",
    "\u1780\u17b4 after a Khmer letter",  # on a letter of their own script too
    "echo a\u2065b",  # unassigned, default-ignorable
    "echo \ufff0\ufff8",
    "echo \U000e0080 \U000e0fff \U000e0000",
    "echo \ue000 private use \U000f0000 \U0010fffd",
    "echo \u0378 unassigned",
    "echo \U0001bca0 shorthand format \U0001d173 beam",
    "test 1 =\u0338 2",  # reads as `≠`
    "test 1 =\u20d2 2",
    "test 1 =\u20e5 2",
    "ls -l\u0335a",  # strikes through the l
    "\u0338 at the start",
    "x\u0301\u0338 two on one base",
    "echo \u00ad soft hyphen \u180e mvs \u2800 braille blank",
]


@pytest.mark.parametrize("payload", PAYLOADS_INVISIBLE, ids=range(len(PAYLOADS_INVISIBLE)))
def test_invisible_and_overlaying_characters_are_marked(payload: str) -> None:
    shown = visible(payload)
    assert unmark(shown) == payload
    hidden = [c for c in payload if not c.isascii() and c != "\u1780"]
    assert hidden
    for char in hidden:
        assert mark(char) in shown, (payload, hex(ord(char)), shown)
    assert not any(c in shown for c in hidden)  # none left raw


def test_every_default_ignorable_code_point_is_marked() -> None:
    """The table from Unicode's DerivedCoreProperties, each code point on a non-ASCII base
    (so the combining-mark rule cannot be what marks it)."""
    points = [c for a, b in DEFAULT_IGNORABLE for c in range(a, b + 1)]
    assert len(points) == 4174  # the property's size in Unicode 15.0 to 16.0
    raw = [hex(c) for c in points if mark(chr(c)) not in visible("ä" + chr(c))]
    assert not raw


def test_every_unassigned_private_surrogate_and_format_character_is_marked() -> None:
    """All of Unicode, by category (Python's database): Cn, Co, Cs, Cf, Cc are never raw."""
    import sys
    import unicodedata

    hidden = {"Cn", "Co", "Cs", "Cf", "Cc"}
    raw = [
        hex(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) in hidden and not unsafe(chr(c), base="ä")
    ]
    assert raw == ["0x9", "0xa"], raw[:20]  # tab and newline, kept in multi-line text


@given(
    st.characters(codec="ascii"),
    st.characters(categories=["Mn", "Me"]),
    st.characters(categories=["Mn", "Me"]),
)
def test_a_combining_mark_never_draws_on_ascii(base: str, one: str, two: str) -> None:
    shown = visible(base + one + two)
    assert mark(one) in shown and mark(two) in shown
    assert unmark(shown) == base + one + two


# Text in other scripts shows as itself: no over-marking of ordinary writing.
LEGITIMATE = [
    "naïve café",  # precomposed
    "Tiếng Việt",
    "हिन्दी",  # Devanagari: vowel signs on their letters
    "ภาษาไทย",  # Thai
    "עִבְרִית",  # Hebrew points on Hebrew letters
    "العربية",
    "日本語のテキスト",
    "ខ្មែរ",  # Khmer, with its coeng sign
    "Ελληνικά",
]


@pytest.mark.parametrize("text", LEGITIMATE)
def test_ordinary_text_in_other_scripts_is_not_marked(text: str) -> None:
    assert visible(text) == text


# Separators that are not a newline: each stays in its line as a mark, and the diff panel
# for "echo one<sep>echo two" differs from the one with a real newline.
PAYLOADS_BREAKS = ["\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def panel_lines(tmp_path, content: str, old: str | None = None) -> list[str]:
    from agentcli.ui.call_panel import highlighted
    from agentcli.ui.call_preview import preview

    target = tmp_path / "run.sh"
    if old is None:
        target.unlink(missing_ok=True)
    else:
        target.write_text(old, newline="")
    shown = preview("write_file", {"path": "run.sh", "content": content}, tmp_path)
    assert shown.kind == "diff"
    return [line.plain for line in highlighted(shown.text, "diff")]


@pytest.mark.parametrize("sep", PAYLOADS_BREAKS, ids=[hex(ord(s[0])) for s in PAYLOADS_BREAKS])
def test_the_diff_panel_breaks_lines_only_at_newlines(tmp_path, sep: str) -> None:
    lines = panel_lines(tmp_path, f"echo one{sep}echo two\n")
    body = lines[3:]
    if sep == "\r\n":  # a newline after all, with the CR before it shown
        assert body == ["+echo one⟦CR⟧", "+echo two"], lines
    else:
        assert body == ["+" + visible(f"echo one{sep}echo two")], lines
    assert mark(sep[0]) in body[0]
    real = panel_lines(tmp_path, "echo one\necho two\n")
    assert real[3:] == ["+echo one", "+echo two"]  # a real newline is still a line


def test_the_panels_of_different_bytes_differ(tmp_path) -> None:
    contents = [f"echo one{sep}echo two\n" for sep in [*PAYLOADS_BREAKS, "\n"]]
    panels = {tuple(panel_lines(tmp_path, c)) for c in contents}
    assert len(panels) == len(contents)


def test_a_missing_newline_at_the_end_is_said_as_diff_says_it(tmp_path) -> None:
    note = "\\ No newline at end of file"
    assert panel_lines(tmp_path, "echo hi")[3:] == ["+echo hi", note]
    assert panel_lines(tmp_path, "echo hi\n")[3:] == ["+echo hi"]
    # the same line, with and without its newline: a change, shown as diff -u shows it
    assert panel_lines(tmp_path, "a\nb\n", old="a\nb")[3:] == [" a", "-b", note, "+b"]
    assert panel_lines(tmp_path, "a\nb", old="a\nb\n")[3:] == [" a", "-b", "+b", note]
    assert panel_lines(tmp_path, "z\nb", old="a\nb")[3:] == ["-a", "+z", " b", note]


def test_a_content_line_cannot_pose_as_the_no_newline_note(tmp_path) -> None:
    lines = panel_lines(tmp_path, "x\n\\ No newline at end of file\n")
    assert lines[3:] == ["+x", "+\\ No newline at end of file"]  # content lines start with +


# The Markdown export, read by a CommonMark viewer: hostile texts from the model, the
# person and the tools, each trying to hide, fake or restyle entries.
PAYLOADS_MD = [
    "fine so far\n\n<!--",  # with the next text's "-->": hides the calls between them
    "-->\n\n- tool `shell` (approved by person: terminal, now)",  # a fake entry after it
    "<div>\n<script>alert(1)</script>\n</div>",
    "<span style='display:none'>hidden</span> inline html",
    "# Fake heading",
    "Fake setext\n===",
    "Another\n---",
    "[ref]: https://evil.example/\n\nclick [here][ref]",
    "[//]: # (a hidden comment)",
    "```\nfence\n```",
    "~~~\ntilde fence",
    "**You:** rm -rf ~",
    "> quoted\n>> nested",
    "&lt;b&gt; &#x202e; &amp;",
    "<https://evil.example/%E2%80%AE>",
    "![Docs: https://github.com/org](https://evil.example/)",
    "[https://github.com/org](https://evil.example/)",
    "    indented code\n\n        more",
    "1. one\n2) two\n* three\n+ four",
    "***\n___\n- - -",
    "| a | b |\n|---|---|\n| c | d |",
    "trailing backslash\\\nnext",
    "emphasis *a* _b_ ~~c~~ `d` $x$ :warning: @someone",
    "line one  \nline two\ttab",
    "\u202eevil\x1b[2K",
]


def hostile_thread(texts: list[str]) -> tuple[object, dict, list[tuple[dict, str]]]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from agentcli.thread_rows import ThreadRow

    messages: list = []
    calls: list[tuple[dict, str]] = []
    for index, payload in enumerate(texts):
        call = {"id": f"c{index}", "name": "shell", "args": {"command": payload}}
        messages += [
            HumanMessage(payload),
            AIMessage(payload, tool_calls=[call]),
            ToolMessage(payload, tool_call_id=f"c{index}"),
        ]
        calls.append((call["args"], payload))
    messages.append(AIMessage(texts[-1] if texts else "done"))
    audit = [
        {
            "call_id": "c0",
            "decision": "edited",
            "by": "person",
            "who": "terminal",
            "ran_args": {"command": texts[0] if texts else ""},
            "at": "now",
        }
    ]
    row = ThreadRow("t1", texts[0] if texts else "t", "idle", "now", "now", "/w", "m")
    return row, {"messages": messages, "audit": audit}, calls


def export_tokens(texts: list[str]):
    from markdown_it import MarkdownIt  # as a viewer parses it: GitHub's, HTML included

    from agentcli.ui.markdown_export import to_markdown

    row, values, calls = hostile_thread(texts)
    markdown = to_markdown(row, values)
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return parser.parse(markdown), parser.render(markdown), calls


def check_export(texts: list[str], exact: bool = True) -> None:
    """The export's top level is agentcli's alone; each model text inside its quote renders
    as the chat parses it (`exact`); arguments and results are exact in their fences;
    nothing is HTML, a link or an image; every text reads as itself."""
    import html

    tokens, rendered, calls = export_tokens(texts)
    inline = [c.type for t in tokens if t.children for c in t.children]
    for kind in ("html_block", "html_inline", "link_open", "image"):
        assert kind not in [t.type for t in tokens] + inline, kind
    # the top level: the title, the thread's line, then per payload the person's label and
    # quote, the model's label and quote, its call; then the last answer
    top = [t for t in tokens if t.level == 0 and t.nesting >= 0]
    turn = ["paragraph_open", "blockquote_open", "paragraph_open", "blockquote_open"]
    assert [t.type for t in top] == [
        "heading_open",
        "paragraph_open",
        *(turn + ["bullet_list_open"]) * len(texts),
        *turn[2:],
    ]
    labels = [inline_of(tokens, t) for t in top if t.type == "paragraph_open"][1:]
    assert labels == ["**You:**", "**Assistant:**"] * len(texts) + ["**Assistant:**"]
    # each call: one item, its line, then its arguments and its result, exact
    items = [t for t in tokens if t.type == "list_item_open"]
    top_items = [t for t in items if t.level == 1]
    assert len(top_items) == len(calls)
    fences = [t.content for t in within(tokens, "bullet_list") if t.type == "fence"]
    expected = [
        visible(block).removesuffix("\n") + "\n"
        for args, result in calls
        for block in (dumps(args), result)
    ]
    assert fences == expected
    # each of the model's texts renders as the chat showed it
    quotes = quoted_parts(tokens)  # the person's and the model's by turns, then the last
    model = [*quotes[1 : 2 * len(texts) : 2], quotes[-1]]
    for quote, said in zip(model, [*texts, texts[-1]], strict=True):
        assert not exact or shape(quote) == shape(parse_shown(visible(said))), said
    # and every text reads as itself (markup aside, whitespace runs are one space in HTML)
    words = " ".join(html.unescape(re.sub(r"<[^>]*>", " ", rendered)).split())
    for said in texts:
        assert " ".join(visible(said).split()) in words, said


def inline_of(tokens: list, opening) -> str:
    return tokens[tokens.index(opening) + 1].content


def quoted_parts(tokens: list, kind: str = "blockquote") -> list[list]:
    """The tokens inside each top-level block of `kind`, in order."""
    parts, inside = [], None
    for token in tokens:
        if token.level == 0 and token.type == f"{kind}_open":
            inside = []
        elif token.level == 0 and token.type == f"{kind}_close":
            parts.append(inside)
            inside = None
        elif inside is not None:
            inside.append(token)
    return parts


def _collapsed(pieces: list[tuple]) -> list[tuple]:
    """Text as HTML shows it: runs of spaces (a soft line break is one) as one space, none
    at the ends of a line."""
    out = []
    for index, piece in enumerate(pieces):
        if piece[0] == "text":
            text = re.sub(" +", " ", piece[1])
            if index + 1 == len(pieces) or pieces[index + 1][0] == "hardbreak":
                text = text.rstrip(" ")
            if index == 0 or pieces[index - 1][0] == "hardbreak":
                text = text.lstrip(" ")
            piece = ("text", text)
        out.append(piece)
    return out


def within(tokens: list, kind: str) -> list:
    return [token for part in quoted_parts(tokens, kind) for token in part]


def shape(tokens: list) -> list[tuple]:
    """What a Markdown viewer draws of tokens: each block's kind and nesting, each text
    (adjacent pieces joined), code and its language; not the markers that wrote them."""
    out: list[tuple] = []
    for index, token in enumerate(tokens):
        if token.type == "inline":
            pieces: list[tuple] = []
            one_line = index and tokens[index - 1].type in ("heading_open", "th_open", "td_open")
            for child in token.children or []:
                # a soft break shows as a space; in a heading or a cell, a hard one too
                if child.type == "softbreak" or (one_line and child.type == "hardbreak"):
                    child = Token("text", "", 0, content=" ")
                if child.type == "text" and pieces and pieces[-1][0] == "text":
                    pieces[-1] = ("text", pieces[-1][1] + child.content)
                elif child.type in ("text", "code_inline"):
                    pieces.append((child.type, child.content))
                else:
                    pieces.append((child.type,))
            out.append(("inline", tuple(_collapsed(pieces))))
        elif token.type in ("fence", "code_block"):
            language = token.info.split(" ")[0]  # kept when it is a name (a lexer's, for colour)
            language = language if LANGUAGE.fullmatch(language) else ""
            out.append(("code", token.content.removesuffix("\n"), language))
        else:
            start = token.attrs.get("start") if token.type == "ordered_list_open" else None
            out.append((token.type, token.tag, token.hidden, start, token.attrs.get("style")))
    return out


def test_the_markdown_export_shows_exactly_its_entries() -> None:
    check_export(PAYLOADS_MD)


@pytest.mark.parametrize("payload", PAYLOADS_MD, ids=range(len(PAYLOADS_MD)))
def test_each_hostile_text_is_inert_in_the_export(payload: str) -> None:
    check_export([payload, "-->", payload])


MARKDOWN_CHARS = st.text(
    st.sampled_from(list("<>!-=[]()*_`~#+&;:\\|.1 \n\taz/\"'!$@^{}0).")), min_size=1
)


@given(st.lists(MARKDOWN_CHARS, min_size=1, max_size=4))
def test_no_text_of_markdown_punctuation_changes_the_export(texts: list[str]) -> None:
    # not `exact`: emphasis the export writes next to a link's text or an escape can show
    # as its `*` or `_` (never hiding or adding text, never leaving the quote)
    check_export(texts, exact=False)


# What models write, rendered in the export as the chat renders it.
PAYLOADS_RENDER = [
    "Here are **two** things:\n\n```python\ndef add(a, b):\n    return a + b\n```\n",
    "# Summary\n\n- *one*\n- `two` and ``a ` tick``\n  1. nested\n  2. list\n\n> a quote\n",
    "| tool | calls |\n|:--|--:|\n| `shell` | 3 |\n\nDone at 10:43:56, see [docs](http://x.example/).",
    "Line one\\\nline two  \nthree ~~gone~~ ***both*** _under_ score_in_word\n\n___\n\n"
    "    indented",
    "1) first\n2) second\n\n* star\n+ plus\n\n![chart](http://x.example/c.png) &amp; <b>x</b>",
]


@pytest.mark.parametrize("payload", PAYLOADS_RENDER, ids=range(len(PAYLOADS_RENDER)))
def test_the_export_renders_the_model_markdown_as_the_chat(payload: str) -> None:
    check_export([payload])


# The chat's live Markdown view: everything in the model's text is on the screen.
PAYLOADS_CHAT = [
    ("before <!-- hidden comment --> after", ["<!-- hidden comment -->"]),
    ("<div>\nhidden block\n</div>", ["<div>", "hidden block", "</div>"]),
    ("<!--\nmulti-line hidden\n-->", ["<!--", "multi-line hidden", "-->"]),
    ("<span hidden>inline</span>", ["<span hidden>inline</span>"]),
    (
        "![Docs: https://github.com/org](https://evil.example/x)",
        ["[image: Docs: https://github.com/org] (https://evil.example/x)"],
    ),
    (
        "[https://github.com/org](https://evil.example/x)",
        ["https://github.com/org (https://evil.example/x)"],
    ),
    ('[t](https://a.example/ "a hidden title")', ["t (https://a.example/ 'a hidden title')"]),
    ("[//]: # (a hidden comment)", ["[//]: # (a hidden comment)"]),
    ("[ref]: https://evil.example/\n\n[x][ref]", ["[ref]: https://evil.example/", "[x][ref]"]),
    ("&#x202e;evil &amp; &lt;b&gt;", ["&#x202e;evil &amp; &lt;b&gt;"]),
    ("<https://evil.example/%E2%80%AE>", ["<https://evil.example/%E2%80%AE>"]),
    ("<kbd>k</kbd>", ["<kbd>k</kbd>"]),
    ("\u202eevil\x1b[2K", ["⟦U+202E⟧evil⟦ESC⟧[2K"]),
]


def chat_screen(text: str) -> str:
    import io

    from rich.console import Console

    from agentcli.ui.live_answer import LiveView

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=200)
    view = LiveView(console)
    view.begin("thinking")
    for start in range(0, len(text), 7):  # streamed in pieces
        view.add_text(text[start : start + 7])
    view.end()
    return out.getvalue()


@pytest.mark.parametrize("payload,shown", PAYLOADS_CHAT, ids=range(len(PAYLOADS_CHAT)))
def test_the_chat_view_shows_all_of_the_model_text(payload: str, shown: list[str]) -> None:
    screen = chat_screen(payload)
    for piece in shown:
        assert piece in screen, (piece, screen)
    assert "\u202e" not in screen and "\x1b]8" not in screen  # no raw bidi, no hidden links
    assert not RAW.search(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen).replace("\r", ""))


def test_the_chat_view_still_renders_markdown() -> None:
    screen = chat_screen("# Title\n\n- **bold** item\n\n```python\nprint(1)\n```\n")
    assert "Title" in screen and "• bold item" in screen and "print(1)" in screen
    assert "**" not in screen and "```" not in screen


# ---------------------------------------------------------------------------------------
# Round 3 (issue 25, item 7): characters a person cannot see or would misread, by class.
# A terminal draws nothing for a character of width 0 (wcwidth, as pyte and the terminals
# it models count it) except on the cell before it; a few graphic characters draw blank.

import sys as _sys  # noqa: E402
import unicodedata as _ud  # noqa: E402

from wcwidth import wcwidth  # noqa: E402

from agentcli.terminal_text import BLANK_GLYPHS, combines  # noqa: E402

PAYLOADS_UNSEEN = [
    "echo \ufffc object replacement",
    "echo \U0001d159 null notehead",
    "echo \u303f half fill space",
    "echo \U0001da7f \U0001da80 signwriting spaces",
    "echo \u2800 braille blank",
    "ls -l\u0903a",  # a spacing combining mark (Mc) drawn on the l
    "rm -rf ./build\u0bbe",
    "echo a\u1161b",  # a conjoining Hangul vowel on an ASCII letter
    "echo \u11a8 final consonant \ud7b0 \ud7fb",
    "echo x\ufe0f variation selector",
    "echo x\U000e0100 variation selector 17",
    "echo \U000e0001\U000e0041 tags",
    "echo \ufdd0 \ufdef \ufffe \uffff \U0001fffe \U0010ffff noncharacters",
    "echo \ue000 \U000f0000 \U00100000 private use",
    "echo \u0378 \U0001fb93 unassigned",
    "echo \u180e \u115f \u3164 \uffa0 \u034f fillers",
    "echo \u2061\u2062\u2063\u2064 invisible operators",
    "echo \U0001d173\U0001d17a musical format",
    "echo \u200b\u2060\ufeff zero width",
    "echo \u00ad soft hyphen",
]


def test_every_code_point_a_terminal_draws_nothing_for_is_marked() -> None:
    """All of Unicode: a character of width 0 or -1 is a mark on an ASCII base, and on a
    letter of another script it is a mark unless it combines with that letter."""
    raw_on_ascii, raw_on_letter = [], []
    for code in range(_sys.maxunicode + 1):
        char = chr(code)
        if char in "\n\t" or wcwidth(char) > 0:
            continue
        if not unsafe(char, base="a"):
            raw_on_ascii.append(hex(code))
        if not unsafe(char, base="ä") and not combines(char):
            raw_on_letter.append(hex(code))
    assert raw_on_ascii == [] and raw_on_letter == [], (raw_on_ascii[:20], raw_on_letter[:20])


def test_every_combining_character_is_marked_on_ascii() -> None:
    """Every Mn, Mc, Me and conjoining Hangul vowel or final consonant (by name), on an
    ASCII letter or at the start."""
    combining = [
        chr(c)
        for c in range(_sys.maxunicode + 1)
        if _ud.category(chr(c)) in ("Mn", "Mc", "Me")
        or _ud.name(chr(c), "").startswith(("HANGUL JUNGSEONG", "HANGUL JONGSEONG"))
    ]
    assert len(combining) > 2000 and all(map(combines, combining))
    raw = [hex(ord(c)) for c in combining if not (unsafe(c, base="l") and unsafe(c, base=""))]
    assert raw == []


def test_graphic_characters_drawn_blank_are_marked() -> None:
    for char in ["\ufffc", "\U0001d159", "\u2800", "\u303f", "\U0001da7f", "\U0001da80"]:
        assert char in BLANK_GLYPHS and _ud.category(char) == "So"
        assert visible(f"a{char}b") == f"a{mark(char)}b"
        assert visible(f"ä{char}") == f"ä{mark(char)}"


def test_every_unassigned_noncharacter_and_private_code_point_is_marked() -> None:
    """Noncharacters (U+FDD0-FDEF, the last two of each plane) and private use, by range,
    whatever Python's database calls them."""
    nonchars = [
        *range(0xFDD0, 0xFDF0),
        *(p * 0x10000 + e for p in range(17) for e in (0xFFFE, 0xFFFF)),
    ]
    private = [*range(0xE000, 0xF900), *range(0xF0000, 0xFFFFE), *range(0x100000, 0x10FFFE)]
    raw = [hex(c) for c in nonchars + private if not unsafe(chr(c), base="ä")]
    assert raw == []


@pytest.mark.parametrize("payload", PAYLOADS_UNSEEN, ids=range(len(PAYLOADS_UNSEEN)))
def test_unseen_characters_are_marked_in_process(payload: str) -> None:
    shown = visible(payload)
    assert unmark(shown) == payload
    hidden = [c for c in payload if not (c.isascii() and c.isprintable())]
    assert hidden and all(mark(c) in shown for c in hidden), (payload, shown)
    assert not any(c in shown for c in hidden)


def test_the_review_and_the_result_show_unseen_characters_as_marks(agent: Agent) -> None:
    """Read off an emulated terminal: each review panel, and each call's result printed
    after it, holds the mark of every such character and never the character itself."""
    commands = [
        f"printf '%s\\n' '{p[5:] if p.startswith('echo ') else p}'" for p in PAYLOADS_UNSEEN
    ]
    calls = [("shell", {"command": command}) for command in commands]
    agent.server.push(tool_calls(*calls), text("all done"))
    child, screen, stream = chat_on_screen(agent, {})
    seen: list[str] = []
    for command in [*commands, None]:
        child.expect(CHOICE if command is not None else "all done")
        rows = screen_of(child, screen, stream)
        seen.append("\n".join(rows))
        if command is not None:
            assert panel_text(rows, False) == command
            child.sendline("a")
    leave(child)
    whole = "".join(seen)
    for payload in PAYLOADS_UNSEEN:
        hidden = [c for c in payload if not (c.isascii() and c.isprintable())]
        raw = [hex(ord(c)) for c in hidden if c in whole]
        assert raw == [], (payload, raw)
        # in the review of its call, and in its result (shown on the screens after it)
        assert all(whole.count(mark(c)) >= 2 for c in hidden), payload


# ---------------------------------------------------------------------------------------
# Round 4 (issue 27, bug 3): tabs and blanks as layout where nothing runs; the command
# under review keeps them as marks, since bash tells `a<TAB>b` from `a b` in quotes.

from agentcli.terminal_text import TAB_STOP  # noqa: E402
from agentcli.ui.diff_text import diff_shown  # noqa: E402

WITH_TABS = st.text(st.sampled_from(["\t", "\t", " ", "a", "\n", "\x1b", "\u202e", "界", "⟦"]))


@given(WITH_TABS | ANY_TEXT, st.booleans())
def test_tabs_as_layout_are_spaces_and_hide_nothing(text: str, multiline: bool) -> None:
    shown = visible(text, multiline, tabs=True)
    assert "\t" not in shown and not RAW.search(shown)
    # the same as visible() shows it, each tab (raw, or marked in one-line text) now spaces
    tab = "\t" if multiline else mark("\t")
    pattern = " +".join(re.escape(piece) for piece in visible(text, multiline).split(tab))
    assert re.fullmatch(pattern, shown, re.DOTALL), (text, shown)


@given(st.text(st.sampled_from(["\t", " ", "a", "\n"])))
def test_a_tab_ends_at_the_next_tab_stop_of_its_line(text: str) -> None:
    assert visible(text, tabs=True) == text.expandtabs(TAB_STOP)  # as Python, and a terminal


def test_a_wide_character_or_a_mark_counts_its_cells() -> None:
    assert visible("界\tx", tabs=True) == "界      x"  # two cells, six spaces
    assert visible("\x1b\tx", tabs=True) == "⟦ESC⟧   x"  # five cells, three spaces
    assert visible("ä\u0301\tx", tabs=True) == "ä\u0301       x"  # the accent takes none


def test_the_command_under_review_keeps_its_tabs_and_blanks_as_marks() -> None:
    from rich.console import Console

    from agentcli.ui.call_panel import call_panel
    from agentcli.ui.call_preview import Preview

    console = Console(width=60, color_system=None, force_terminal=True)
    with console.capture() as captured:
        console.print(call_panel("shell", Preview("shell", "printf 'a\tb'  "), 1, 1, ""))
    assert "printf 'a⟦HT⟧b'⟦SP⟧⟦SP⟧" in captured.get()


DIFF = (
    "--- a/f\t\n+++ b/f\n@@ -1,4 +1,4 @@\n \tkeep\n \n-\tgone  \n+\tnew\t\n+x\n"
    "\\ No newline at end of file\ndiff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-a\n+b"
)


def test_a_diff_shows_its_layout_as_layout() -> None:
    assert diff_shown(DIFF).split("\n") == [
        "--- a/f⟦HT⟧",  # a header's tab and trailing blanks: marks
        "+++ b/f",
        "@@ -1,4 +1,4 @@",
        "         keep",  # the sign's column, then the file's tab to its tab stop
        " ",  # a blank context line: blank
        "-        gone⟦SP⟧⟦SP⟧",  # the blanks that end a changed line: marks
        "+        new⟦HT⟧",
        "+x",
        "\\ No newline at end of file",
        "diff --git a/g b/g",
        "--- a/g",  # the next file's header: not a removed line
        "+++ b/g",
        "@@ -1 +1 @@",
        "-a",
        "+b",
    ]


@given(WITH_TABS | ANY_TEXT)
def test_a_diff_leaves_nothing_raw(text: str) -> None:
    shown = diff_shown("@@ -1 +1 @@\n" + "\n".join(s + text for s in (" ", "-", "+")))
    assert "\t" not in shown and not RAW.search(shown)
