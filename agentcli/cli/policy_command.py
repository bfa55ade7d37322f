"""`agentcli policy check|list`: what the approval policy would decide for a call, and why;
the rules in force, with where each came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from agentcli.cli.common_options import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    common_options,
    warn,
)
from agentcli.errors import UsageError
from agentcli.terminal_text import line

app = typer.Typer(
    help="Test the approval policy: what it decides for a call, and the rules in force.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON object.")]


@app.command()
@common_options()
def check(
    tool: Annotated[str, typer.Argument(metavar="TOOL", help="The tool's name, e.g. shell.")],
    args_json: Annotated[
        str | None,
        typer.Argument(
            metavar="[ARGS_JSON]", help='The call\'s arguments, e.g. \'{"command": "git status"}\'.'
        ),
    ] = None,
    as_json: JsonOpt = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    *,
    common: Common,
) -> None:
    """Print what the policy decides for one call (allow, ask or deny), the rule, flag or
    list that decided and where it came from, and for the shell each command the parser
    found; the PreToolUse hooks whose matcher selects the call, which a run would ask too
    (named, never run). The same flags as run apply. Exit 0 whatever the verdict; 2 on bad arguments
    (TOOL naming no tool the session would have, too)."""
    from agentcli.session.policy_reading import explained

    try:
        args: Any = json.loads(args_json) if args_json is not None else {}
    except (json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(f"ARGS_JSON is not valid JSON ({exc})") from None
    if not isinstance(args, dict):
        raise UsageError('ARGS_JSON must be a JSON object, e.g. \'{"command": "git status"}\'')
    workspace = common.checked_workspace() or Path.cwd()
    flags = (auto_approve, approve, deny)
    report = explained(common.settings(), tool, args, workspace, flags, warn)
    if as_json:
        print(json.dumps(report, indent=2))  # ASCII: controls and surrogates escaped
        return
    print(line(f"decision: {report['decision']}"))
    print(line(f"by: {report['by']}" + _from(report)))
    for rule in report.get("rules") or ([report["rule"]] if "rule" in report else []):
        print(line(f"rule {rule['number']}: {_rule_text(rule)}"))
    commands = report.get("commands")
    if commands is not None:
        print(f"commands the parser found ({len(commands)}):")
        for found in commands:
            via = f"  [{found['via']}]" if found["via"] else ""
            print(line(f"  {found['decision']:<5}  {found['command']}{via}  ({found['by']})"))
    hooks = report["hooks"]
    if hooks:  # named, never run: a check has no side effects
        print(f"PreToolUse hooks that would also decide it, not run by a check ({len(hooks)}):")
        for hook in hooks:
            print(line(f"  matcher {json.dumps(hook['matcher'])}: {hook['command']}"))


def _from(report: dict[str, Any]) -> str:
    where = report["from"]
    return "" if where == report["by"] else f", from {where}"


def _rule_text(rule: dict[str, Any]) -> str:
    text = f'tool = "{rule["tool"]}"'
    if rule["match"] is not None:
        text += f", match = {json.dumps(rule['match'], ensure_ascii=False)}"
    text += f', decision = "{rule["decision"]}"'
    if rule["sandbox"]:
        text += f', sandbox = "{rule["sandbox"]}"'
    return text


@app.command(name="list")
@common_options()
def list_rules(
    as_json: JsonOpt = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    *,
    common: Common,
) -> None:
    """List the rules in force, in the order they are tried within each decision (deny,
    then ask, then allow), with where each came from; the allow and deny lists; the flags."""
    from agentcli.session.policy_reading import rules_in_force

    settings = common.settings()
    rows = rules_in_force(settings)
    lists: dict[str, dict[str, Any]] = {
        name: {"tools": list(getattr(settings, name)), "from": settings.sources.get(key)}
        for name, key in (("allow", "approval.allow"), ("deny", "approval.deny"))
    }
    flags: dict[str, Any] = {
        "auto_approve": auto_approve,
        "approve": approve or [],
        "deny": deny or [],
    }
    if as_json:
        print(json.dumps({"rules": rows, **lists, "flags": flags}, indent=2))
        return
    if not rows:
        print("no [[approval.rules]]")
    for row in rows:
        print(line(f"{row['number']:>2}. {_rule_text(row)}  (from {row['from']})"))
        for key in ("should_match", "should_not_match"):
            if row[key]:
                print(line(f"    {key}: {json.dumps(row[key], ensure_ascii=False)}"))
        if row["warning"]:
            print(line(f"    warning: {row['warning']}"))
    for name, value in lists.items():
        tools = ", ".join(value["tools"]) or "(none)"
        where = f"  (from {value['from']})" if value["from"] else ""
        print(line(f"{name}: {tools}{where}"))
    on = [f"--approve {t}" for t in flags["approve"]] + [f"--deny {t}" for t in flags["deny"]]
    if auto_approve:
        on.insert(0, "--auto-approve")
    if on:
        print(line(f"flags: {' '.join(on)}"))
