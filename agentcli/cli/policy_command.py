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
from agentcli.cli.session_opening import make_policy
from agentcli.config import Settings
from agentcli.errors import ConfigError, UsageError
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
    found. The same flags as run apply. Exit 0 whatever the verdict; 2 on bad arguments
    (TOOL naming no tool the session would have, too)."""
    from agentcli.policy.explanation import explain

    try:
        args: Any = json.loads(args_json) if args_json is not None else {}
    except (json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(f"ARGS_JSON is not valid JSON ({exc})") from None
    if not isinstance(args, dict):
        raise UsageError('ARGS_JSON must be a JSON object, e.g. \'{"command": "git status"}\'')
    settings = common.settings()
    _check_names(settings, tool, approve, deny)
    policy = make_policy(settings, auto_approve, approve, deny)
    workspace = common.checked_workspace() or Path.cwd()
    report = explain(policy, tool, args, settings.rules, settings.sources, workspace)
    if as_json:
        print(json.dumps(report, indent=2))  # ASCII: controls and surrogates escaped
        return
    print(line(f"decision: {report['decision']}"))
    print(line(f"by: {report['by']}" + _from(report)))
    for rule in report.get("rules") or ([report["rule"]] if "rule" in report else []):
        print(line(f"rule {rule['number']}: {_rule_text(rule)}"))
    commands = report.get("commands")
    if commands is None:
        return
    print(f"commands the parser found ({len(commands)}):")
    for found in commands:
        via = f"  [{found['via']}]" if found["via"] else ""
        print(line(f"  {found['decision']:<5}  {found['command']}{via}  ({found['by']})"))


def _check_names(
    settings: Settings, tool: str, approve: list[str] | None, deny: list[str] | None
) -> None:
    """TOOL, the flags' and the config's tool names must name tools this session would have
    (those `agentcli tools` lists): a verdict for a tool that does not exist would only
    mislead. A config problem is a ConfigError, the others a UsageError (exit 2 both)."""
    from agentcli.agent.toolset.loading import list_tools
    from agentcli.agent.toolset.tool_names import (
        flag_problems,
        settings_problems,
        unknown_tool,
        unlisted_servers,
    )

    if found := settings_problems(settings, approve, deny):  # built-ins only: all at once
        raise ConfigError(*found)
    items = list_tools(settings, warn=warn)  # a config naming no tool fails here
    known = [item.name for item in items]
    unchecked = unlisted_servers(settings, (item.source for item in items))
    problems = flag_problems(known, approve, deny, unchecked)
    if why := unknown_tool(tool, known, unchecked):
        problems.insert(0, f"TOOL {tool}: {why}")
    if problems:
        raise ConfigError(*problems)


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
    from agentcli.policy.explanation import rule_rows

    settings = common.settings()
    rows = rule_rows(settings.rules, settings.sources)
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
