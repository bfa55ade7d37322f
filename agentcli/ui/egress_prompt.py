"""An egress question in the chat: a confined command wants a host and port that
`[sandbox] network` does not list (tools/egress_questions.py). Asked during the command's
live output; the command waits for the answer.

The host is what the proxy would connect to, normalised by tools/urls.py (ASCII: punycode
for an international name, never its Unicode look-alike), chosen by the command: it is shown
alone on its own line, made safe for the terminal, its port beside it in agentcli's words,
so no part of it can pass for agentcli's text or another host.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli_tools.egress_questions import CONFIG, ONCE, REFUSE, THREAD
from rich.console import Console
from rich.text import Text

from agentcli.events import EgressQuestion
from agentcli.ui.review_keys import QUIT, REDRAW, WITHDRAWN, read_choice
from agentcli.ui.safe_text import safe_line, styled

if TYPE_CHECKING:
    from agentcli.session.thread_session import ThreadSession

CHOICES = "[o]nce  [t]his thread  [w]rite to the config file  [r]efuse > "
KEYS = {"o": ONCE, "t": THREAD, "w": CONFIG, "r": REFUSE, QUIT: REFUSE}
GONE = "(the command no longer waits: the connection was refused)"


def ask_egress(console: Console, question: EgressQuestion, session: ThreadSession) -> None:
    """Show the question and send the person's answer to the session (a ConfigError when
    the config file cannot take the host is said, and the question asked again). Ctrl-D,
    q, Esc and Ctrl-C refuse."""
    from agentcli.config import default_config_path

    config_path = session.settings.config_path or default_config_path()
    qid = question.question_id

    def gone() -> bool:
        return not session.egress_waiting(qid)

    _show(console, question, config_path)
    while True:
        try:
            key = read_choice(console, CHOICES, gone)
        except EOFError:
            key = QUIT
        if key == WITHDRAWN:
            console.print(Text(GONE, style="yellow"))
            return
        if key == REDRAW:
            _show(console, question, config_path)
            continue
        choice = KEYS.get(key.lower()[:1] if key else key)
        if choice is None:
            console.print(Text(f"unknown choice {key!r}", style="yellow"))
            continue
        from agentcli.errors import AgentcliError

        try:
            still = session.answer_egress(qid, choice)
        except AgentcliError as exc:
            for line in exc.lines:
                console.print(styled(("not written: ", "red"), line))
            continue
        if not still:
            console.print(Text(GONE, style="yellow"))
        elif choice == CONFIG:
            console.print(styled(("written to ", "green"), (str(config_path), "green")))
        return


def _show(console: Console, question: EgressQuestion, config_path: Path) -> None:
    console.print(
        styled(
            ("network: ", "bold yellow"),
            f"the command asks to connect ({question.how}) to a host and port"
            " [sandbox] network does not list:",
        )
    )
    line = Text("  host ", style="dim")
    line.append_text(safe_line(question.host, style="bold"))
    console.print(line, soft_wrap=False, overflow="fold")
    console.print(styled(("  port ", "dim"), (str(question.port), "bold")))
    said = "once: this connection · this thread: kept with the thread · write: add it to"
    console.print(styled((f"{said} [sandbox] network in {config_path}", "dim")))
