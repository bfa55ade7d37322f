"""Slash commands in chat. Each returns False when the person left the chat at a review
(Ctrl-D); q at a review comes back to the prompt, the calls waiting."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentcli_tools.plurals import counted
from rich.text import Text

from agentcli.errors import AgentcliError, UsageError
from agentcli.ui.safe_text import styled

if TYPE_CHECKING:
    from rich.console import Console

    from agentcli.events import Event
    from agentcli.session.local import Session
    from agentcli.session.thread_session import ThreadSession
    from agentcli.ui.event_renderer import Renderer


class Chat(Protocol):
    """What a slash command may use of the chat it runs in (chat_loop.Chat)."""

    console: Console
    leaving: bool
    mode: str  # the approval mode, shown in the header

    @property
    def view(self) -> Renderer: ...

    @property
    def session(self) -> ThreadSession: ...
    def error(self, exc: AgentcliError) -> None: ...
    def banner(self) -> None: ...
    def answer_pending(self) -> bool: ...
    def play(self, start: Callable[[], Iterator[Event]]) -> bool: ...
    def send(self, text: str, plan: bool | None = None) -> bool: ...


Handler = Callable[[Chat, str], bool]
HANDLERS: dict[str, tuple[str, Handler]] = {}


def command(name: str, usage: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        HANDLERS[name] = (usage, handler)
        return handler

    return register


def run_command(chat: Chat, line: str) -> bool:
    name, _, arg = line.partition(" ")
    found = HANDLERS.get(name)
    if found is None:
        chat.console.print(styled((f"unknown command {name}: /help lists them", "yellow")))
        return True
    try:
        return found[1](chat, arg.strip())
    except AgentcliError as exc:
        chat.error(exc)
        return True


def local(chat: Chat, name: str) -> Session:
    """The chat's local session; commands that need its database refuse a remote one."""
    session: Session = chat.session.local(name)
    return session


def say(chat: Chat, text: str, style: str = "dim") -> bool:
    chat.console.print(styled((text, style)))
    return True


@command("/help", "/help: this list")
def _help(chat: Chat, arg: str) -> bool:
    for usage, _ in HANDLERS.values():
        chat.console.print(Text(usage))
    return say(chat, "Esc then Enter starts a new line; Up recalls earlier messages.")


@command("/exit", "/exit, /quit: leave (the thread stays; agentcli resume continues it)")
def _exit(chat: Chat, arg: str) -> bool:
    chat.leaving = True
    return True


HANDLERS["/quit"] = ("", _exit)


@command("/new", "/new: start a new thread")
def _new(chat: Chat, arg: str) -> bool:
    chat.session.new_thread()
    chat.banner()
    return True


@command("/threads", "/threads: the latest threads of this workspace")
def _threads(chat: Chat, arg: str) -> bool:
    s = chat.session
    where = None if s.workspace is None else str(s.workspace)  # remote: the whole server
    for row in s.store.recent(10, workspace=where):
        mark = "*" if row.thread_id == s.thread_id else " "
        chat.console.print(styled(f"{mark} {row.thread_id}  {row.status:<17}  {row.title}"))
    return True


@command("/switch", "/switch ID: continue another thread (a prefix is enough)")
def _switch(chat: Chat, arg: str) -> bool:
    if not arg:
        raise UsageError("/switch needs a thread id")
    from agentcli.cli.continuing import show_recap, warn_if_gone
    from agentcli.cli.session_opening import warn_expired

    s = chat.session
    s.open(arg)
    warn_expired(s.thread_id, s.expired, s.settings.expire_after)
    chat.banner()
    if s.workspace is not None and not s.explicit_workspace:  # files here, as recorded
        warn_if_gone(s.workspace, s.thread_id)
    show_recap(chat)
    return chat.answer_pending()


@command("/review", "/review: show the calls waiting for review again, to decide them")
def _review(chat: Chat, arg: str) -> bool:
    if chat.session.pending() is None:
        return say(chat, "no calls are waiting for review")
    return chat.answer_pending()


@command("/history", "/history: this thread's messages and calls")
def _history(chat: Chat, arg: str) -> bool:
    from agentcli.session import history
    from agentcli.session.transcript import decision_text, entries, speaker

    s = local(chat, "/history")
    if s.row is None:
        return say(chat, "nothing yet: this thread starts with your first message")
    for entry in entries(history.values(s.store, s.thread_id)):
        if entry["text"]:
            who = speaker(entry)
            chat.console.print(styled((f"{who}: ", "bold cyan"), entry["text"], multiline=True))
        for call in entry.get("calls", []):
            chat.console.print(styled(f"  → {call['tool']} {decision_text(call['decision'])}"))
    return True


@command(
    "/undo",
    "/undo [--force]: go back to before your last message, files too (on a fork of this thread)",
)
def _undo(chat: Chat, arg: str) -> bool:
    from agentcli.session.undo import apply_undo, left_as_they_are, plan_undo, restored_together

    s = local(chat, "/undo")
    if s.row is None or s.row.turns < 1 or arg.strip() not in ("", "--force"):
        return say(chat, "nothing to undo" if not arg.strip() else "usage: /undo [--force]")
    row = s.store.resolve(s.thread_id)
    plan = plan_undo(s.store, s.settings, row, None)
    fork = apply_undo(s.store, plan, force=arg.strip() == "--force")
    s.open(fork.thread_id)
    restored = plan.restoration.paths if plan.restoration else []
    if restored:
        shown = ", ".join(restored[:10]) + (" ..." if len(restored) > 10 else "")
        say(chat, f"restored {counted(len(restored), 'file')}: {shown}")
        for told in restored_together(plan):
            say(chat, told)
    for told in left_as_they_are(plan):
        say(chat, told)
    return say(chat, f"undone: now on {fork.thread_id}, forked from {row.thread_id}")


@command("/show", "/show [N]: tool result N whole, in the pager (default: the latest)")
def _show(chat: Chat, arg: str) -> bool:
    from agentcli.ui.pager import page_result

    results = chat.view.results
    if not arg.strip():
        number = max(results, default=0)
    elif arg.strip().isdigit():
        number = int(arg.strip())
    else:
        raise UsageError("usage: /show [N], N the number in a result's fold line")
    result = results.get(number)
    if result is None:
        seen = chat.view.numbered
        if not seen:
            return say(chat, "no tool result in this chat yet")
        raise UsageError(f"no result {number}: /show takes 1 to {seen} (the latest ones kept)")
    page_result(chat.console, result)
    return True


@command("/plan", "/plan MESSAGE: the model plans every step at once; you review the plan")
def _plan(chat: Chat, arg: str) -> bool:
    if not arg:
        raise UsageError("/plan needs a message: /plan MESSAGE")
    return chat.send(arg, plan=True)


@command("/mode", "/mode [ask|read|edit|auto|plan]: what runs without asking (in the header)")
def _mode(chat: Chat, arg: str) -> bool:
    from agentcli.cli.common_options import MODE_SUMMARIES, ApprovalMode

    if not arg:
        for mode, summary in MODE_SUMMARIES.items():
            mark = "*" if mode == chat.mode else " "
            chat.console.print(styled(f"{mark} {mode:<5} {summary}"))
        return True
    if arg not in MODE_SUMMARIES:
        raise UsageError(f"unknown mode {arg!r}: /mode {'|'.join(MODE_SUMMARIES)}")
    chat.session.set_mode(arg)
    chat.mode = arg
    chat.banner()
    return say(chat, f"mode {arg}: {MODE_SUMMARIES[ApprovalMode(arg)]}")


@command("/retry", "/retry: try a failed model call again")
def _retry(chat: Chat, arg: str) -> bool:
    return chat.play(chat.session.resume)


@command("/model", "/model NAME: use another model from the next message")
def _model(chat: Chat, arg: str) -> bool:
    if not arg:
        return say(chat, f"model: {chat.session.settings.model or 'chosen by the server'}")
    local(chat, "/model NAME").set_model(arg)
    return say(chat, f"model: {arg}")


@command("/tools", "/tools: the tools and the policy each gets")
def _tools(chat: Chat, arg: str) -> bool:
    s = local(chat, "/tools")
    allowed = s.state().values.get("allowed_tools", []) if s.row else []
    for name in s.tools:
        verdict = s.policy.decide(name, {}, allowed, workspace=s.workspace)
        chat.console.print(styled(f"{name:<20} {verdict.decision:<5} ({verdict.by})"))
    return True


@command("/approve", "/approve TOOL: allow a tool for the rest of this thread")
def _approve(chat: Chat, arg: str) -> bool:
    if not arg:
        raise UsageError("/approve needs a tool name")
    local(chat, "/approve").allow_tool(arg)
    return say(chat, f"{arg} is allowed for the rest of this thread")


@command("/cost", "/cost: tokens and cost of this thread")
def _cost(chat: Chat, arg: str) -> bool:
    from agentcli.session.spending import spent

    s = chat.session
    if s.row is None:
        return say(chat, "nothing spent yet")
    thread, model = spent(s.settings, s.store.resolve(s.thread_id)), s.settings.model
    if thread.cost_usd is not None:
        price = f"${thread.cost_usd:.4f} ({model}, prices from {thread.prices_from})"
    else:
        price = f'no price known for {model}: add [model.prices."{model}"] to the config'
    used = f"{thread.input_tokens:,} tokens in · {thread.output_tokens:,} out"
    return say(chat, f"{used} · {price}", "")


@command("/compact", "/compact: summarise the older messages to free the context window")
def _compact(chat: Chat, arg: str) -> bool:
    from agentcli.ui.event_renderer import compacted_line

    done = local(chat, "/compact").compact()
    if done is None:
        return say(chat, "nothing to compact: the thread is short enough")
    return say(chat, compacted_line(done))


@command("/export", "/export [FILE]: write this thread as Markdown (default: ID.md)")
def _export(chat: Chat, arg: str) -> bool:
    from agentcli.session import history
    from agentcli.ui.markdown_export import to_markdown

    s = local(chat, "/export")
    if s.row is None:
        return say(chat, "nothing to export yet")
    path = Path(arg or f"{s.thread_id}.md").expanduser()
    row = s.store.resolve(s.thread_id)
    path.write_text(to_markdown(row, history.values(s.store, s.thread_id)), encoding="utf-8")
    return say(chat, f"wrote {path}")


COMMANDS = sorted(HANDLERS)
