"""Snapshots of the workspace around the calls that may change it, kept in a git object
store of agentcli's own, and what undo restores from them."""
