"""The answer to a review at the terminal: the policy's where it decides every call (no
panel shows them), else the person's at the review's panels (or the plan's screen), with
the review's alarms ringing while they wait."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcli.decisions import Decision
from agentcli.events import ReviewRequest

if TYPE_CHECKING:
    from agentcli.cli.review_alarm import ReviewAlarm
    from agentcli.session.thread_session import ThreadSession
    from agentcli.ui.always_rule import AlwaysScope
    from agentcli.ui.event_renderer import Renderer
    from agentcli.ui.review_keys import HeldChoice


def review_decisions(
    s: ThreadSession,
    review: ReviewRequest,
    console: Any,
    view: Renderer,
    alarms: ReviewAlarm,
    drawn: Callable[[], None],
    held: HeldChoice | None = None,
) -> list[Decision] | None:
    """The decisions for `review`; None if the person left it (q, Esc, Ctrl-C). `drawn` is
    called once a panel is up (or the plan is shown); `held`: a key pressed at the panel
    drawn before the session was made (cli/early_review.py)."""
    decisions = s.policy_decisions(review)
    if decisions is not None:
        view.say_calls()  # decided by the policy: no panel showed them
        return decisions
    from agentcli.ui.review_prompt import ask_decisions

    asked = {str(request["id"]) for request in review.action_requests}
    planned = review.plan is not None  # the plan review shows the plan call whole
    view.say_calls(shown=lambda call: planned or str(call.get("id")) in asked)
    scope = always_scope(s)
    with alarms.start(s, review):
        if review.plan is not None:
            from agentcli.ui.plan_screen import ask_plan_decisions

            drawn()  # the model loads while the plan is read
            answered = ask_plan_decisions(console, review, s.check_edit, s.workspace)
        else:
            answered = ask_decisions(
                console, review, s.check_edit, s.workspace, scope, drawn=drawn, held=held
            )
    alarms.told()
    if answered is None:
        return None
    return [{**decision, "by": "terminal"} for decision in answered]


def always_scope(session: ThreadSession) -> AlwaysScope:
    """What `A` counts its rule against (the thread's audit) and writes it to (the config
    file in use, or the default one; none for a thread on a LangGraph server)."""
    from agentcli.config import default_config_path
    from agentcli.ui.always_rule import AlwaysScope

    audit = list(session.values().get("audit") or [])  # a review: the thread exists
    if session.server_url:
        return AlwaysScope(audit, None)
    return AlwaysScope(audit, session.settings.config_path or default_config_path())
