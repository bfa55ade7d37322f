"""Undo: snapshots of the workspace around each group of calls that may change it (taken
by the executor, around_calls.py), kept in a git object store of agentcli's own
(shadow_git.py, call_snapshots.py), what the review says no snapshot can hold
(undo_limits.py, git_own_paths.py), and what undo puts back (rewind.py, file_modes.py).
The operation itself (fork the thread, restore the files) is the session's
(session/undo.py), which the CLI's `/undo` and `agentcli undo` call."""
