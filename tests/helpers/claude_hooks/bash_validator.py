#!/usr/bin/env python3
"""A PreToolUse hook for Claude Code's Bash tool, written after the bash command validator in
Claude Code's hook examples (examples/hooks/): it reads the hook's JSON on stdin and blocks a
command that breaks a house rule with exit 2, the reasons on stderr. Nothing here knows
agentcli: it must work as it would under Claude Code.

    [[hooks.PreToolUse]]
    matcher = "Bash"
    command = "python3 /path/to/bash_validator.py"
"""

import json
import re
import sys

RULES = [
    (r"^grep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep'"),
    (r"^find\s+\S+\s+-name\b", "Use 'rg --files -g PATTERN' instead of 'find -name'"),
]


def main() -> None:
    try:
        event = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"invalid hook input: {exc}", file=sys.stderr)
        sys.exit(1)  # a non-blocking error: the call goes on
    if event.get("tool_name") != "Bash":
        sys.exit(0)
    command = event.get("tool_input", {}).get("command", "")
    broken = [message for pattern, message in RULES if re.search(pattern, command)]
    for message in broken:
        print(f"• {message}", file=sys.stderr)
    sys.exit(2 if broken else 0)  # only 2 blocks, and sends stderr to the model


if __name__ == "__main__":
    main()
