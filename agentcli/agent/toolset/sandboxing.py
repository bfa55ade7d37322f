"""The sandbox on agentcli's side: from the settings, and who may lift it for one call.

The mechanism is tools.sandbox (and tools/confine.py). Here: the settings' `[sandbox]` as a
``Sandbox``; whether a call would run confined (a shell call, the sandbox on); the one way
a rule can run a command unconfined (an `[[approval.rules]]` allow rule on shell with
``sandbox = "off"`` matching every command of the line, written by the person); and the
label of the sandbox a call ran under, for the transcript.

A person lifts it for one call with the review's "unconfined once" choice (an approve
decision with ``"sandbox": "off"``); the review and approve nodes seal that with the call
(agent/review/approval_seals.py), so no client can add it to a task, and no flag can either.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentcli_tools.sandbox import Sandbox

from agentcli.config import Settings

if TYPE_CHECKING:
    from agentcli.policy.approval_modes import Box
    from agentcli.policy.approval_policy import Rule

UNCONFINED = "off"  # the decision's and the task's `sandbox` value that lifts it
OFF = Sandbox(mode="off")
SHELL = "shell"


def sandbox_of(settings: Settings) -> Sandbox:
    network = settings.sandbox_network
    return Sandbox(
        mode=settings.sandbox_mode,
        network=network is True,
        hosts=tuple(network) if isinstance(network, list) else (),
        writable=tuple(settings.sandbox_writable),
        # agentcli's data (the thread database, the undo snapshots) stays read-only to
        # confined commands when the workspace holds it (a workspace that is the home folder)
        protected=_data_paths(settings),
    )


def mode_box(settings: Settings) -> Box:
    """What the approval modes may count on in a run with these settings: a shell command
    runs confined only with the sandbox on and the network off, no host listed either (a
    listed host can be sent anything) (the run context's sandbox is made from the same
    settings: sandbox_of; agent/review/mode_checks.py checks it)."""
    from agentcli.policy.approval_modes import Box

    sandbox = sandbox_of(settings)
    return Box(
        confined=sandbox.confines and sandbox.network is False and not sandbox.hosts,
        undo=settings.undo_snapshots,
        read_only=frozenset(settings.read_only),
    )


def _data_paths(settings: Settings) -> tuple[str, ...]:
    database = () if settings.db_url else (str(settings.db_path),)
    files = [f"{db}{end}" for db in database for end in ("", "-wal", "-shm", "-journal")]
    return (str(settings.snapshots_dir), *files)


def would_confine(context: Any, tool: str) -> bool:
    """Whether a call of ``tool`` runs confined in this run context: a shell call, with a
    sandbox that is on (MCP servers are confined when they start, never lifted per call)."""
    sandbox = getattr(context, "sandbox", None)
    return tool == SHELL and isinstance(sandbox, Sandbox) and sandbox.confines


def unconfined_rule(rules: Sequence[Rule], tool: str, args: Mapping[str, Any]) -> str | None:
    """Which of the policy's rules run this call unconfined (their labels), or None: every
    simple command of a plain shell line (agentcli/policy/shell_rules.py) must match an allow rule
    on shell with ``sandbox = "off"``; a line that is not plain matches none."""
    if tool != SHELL:
        return None
    lifting = {
        number: rule
        for number, rule in enumerate(rules, 1)
        if rule.sandbox == UNCONFINED and rule.decision == "allow" and rule.match
    }
    if not lifting:
        return None
    from agentcli.policy import shell_rules

    used: list[str] = []
    for part in shell_rules.simple_commands(str(args.get("command", ""))) or [""]:
        hit = next(
            (n for n, r in lifting.items() if part and fnmatch.fnmatchcase(part, str(r.match))),
            None,
        )
        if hit is None:
            return None
        used.append(f"rule {hit} ({SHELL} {lifting[hit].match}, sandbox off)")
    return " and ".join(dict.fromkeys(used))


def ran_under(context: Any, unconfined: bool) -> str:
    """What the transcript records for a shell call: the sandbox it ran under."""
    if unconfined:
        return "off (unconfined once)"
    sandbox = getattr(context, "sandbox", None)
    return sandbox.label() if isinstance(sandbox, Sandbox) else "off"
