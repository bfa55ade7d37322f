"""Hooks: the person's own programs at points of a run, speaking Claude Code's hook protocol
(events PreToolUse, PostToolUse, UserPromptSubmit, Notification, Stop)."""
