#!/usr/bin/env python3
"""A PreToolUse hook that answers with Claude Code's JSON: `decide.py DECISION [REASON]
[UPDATED_INPUT_JSON]` prints {"hookSpecificOutput": {"hookEventName": "PreToolUse",
"permissionDecision": ..., "permissionDecisionReason": ..., "updatedInput": ...}}, and
appends what it was given to $HOOK_LOG when that is set."""

import json
import os
import sys

event = json.load(sys.stdin)
if log := os.environ.get("HOOK_LOG"):
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(event) + "\n")
said = {"hookEventName": "PreToolUse", "permissionDecision": sys.argv[1]}
if len(sys.argv) > 2 and sys.argv[2]:
    said["permissionDecisionReason"] = sys.argv[2]
if len(sys.argv) > 3:
    said["updatedInput"] = json.loads(sys.argv[3])
print(json.dumps({"hookSpecificOutput": said}))
