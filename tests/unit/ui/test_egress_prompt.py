"""The network question as the chat draws it (ui/egress_prompt.py) and as the session reads
it from a run's stream (session/stream_events.py): a host is untrusted text (a server may
send any question), drawn alone on its line with nothing a terminal could act on."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from agentcli.events import EgressQuestion
from agentcli.session.stream_events import Translator
from agentcli.ui.egress_prompt import _show


def drawn(host: str) -> str:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    _show(console, EgressQuestion("call", "q1", "CONNECT", host, 443), Path("/c/config.toml"))
    return out.getvalue()


def test_a_host_that_would_draw_over_the_question_is_shown_marked() -> None:
    shown = drawn("evil.example\x1b[2K\r  host pypi.org\u202e")
    assert "\x1b[2K" not in shown and "\r" not in shown and "\u202e" not in shown
    assert "⟦ESC⟧" in shown and "⟦CR⟧" in shown and "⟦U+202E⟧" in shown
    lines = [line for line in shown.splitlines() if line.lstrip().startswith("host ")]
    assert lines == ["  host evil.example⟦ESC⟧[2K⟦CR⟧  host pypi.org⟦U+202E⟧"]


def test_a_question_from_the_stream_is_read_only_whole() -> None:
    seen = Translator()
    good = {"id": "q1", "call_id": "c", "how": "HTTP", "host": "a.example", "port": 80}
    assert list(seen.events("custom", {"egress_question": good})) == [
        EgressQuestion("c", "q1", "HTTP", "a.example", 80)
    ]
    for bad in ({**good, "port": "80"}, {**good, "port": True}, {**good, "host": None}):
        assert list(seen.events("custom", {"egress_question": bad})) == []
