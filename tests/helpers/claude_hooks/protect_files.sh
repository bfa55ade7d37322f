#!/usr/bin/env bash
# A PreToolUse hook for Claude Code's Edit and Write tools, in the jq style of Claude Code's
# hooks guide ("protect files"): a path holding a protected part is blocked with exit 2.
#
#   [[hooks.PreToolUse]]
#   matcher = "Edit|Write"
#   command = "bash /path/to/protect_files.sh"
file_path=$(jq -r '.tool_input.file_path // empty')
for protected in ".env" "package-lock.json" ".git/"; do
  if [[ "$file_path" == *"$protected"* ]]; then
    echo "Blocked: $file_path matches protected pattern '$protected'" >&2
    exit 2
  fi
done
exit 0
