"""What `vulture` (pyproject.toml [tool.vulture]) takes for dead code but something else uses.

Only names a framework, a protocol or a test reaches; dead code is deleted, not listed here.
"""

# keys of TypedDicts, read and written as strings (LangGraph state, review decisions)
allowed_seals  # agentcli/agent/state.py
audit_pending  # agentcli/agent/state.py
plan_results  # agentcli/agent/state.py
edited_action  # agentcli/decisions.py

# Typer reads these: enum members named by option values, a command's signature
read_only  # agentcli/cli/common_options.py
workspace_write  # agentcli/cli/common_options.py
auto  # agentcli/cli/common_options.py (ApprovalMode)
_.__signature__  # agentcli/cli/common_options.py

# protocols and the methods LangGraph calls on what agentcli hands it
CallJournal  # agentcli/threads/call_journal.py: what RunContext.journal is
_.encrypt  # agentcli/threads/compression.py: LangGraph's CipherProtocol
_.decrypt  # agentcli/threads/compression.py
_.handle_tool_error  # tools/base.py: LangChain's BaseTool reads it
trace  # agentcli/ui/attention.py: __exit__'s third parameter
_.on_connect  # agentcli/acp/server.py: the ACP SDK's router calls the Agent's methods
_.new_session  # agentcli/acp/server.py
_.load_session  # agentcli/acp/server.py
_.set_session_mode  # agentcli/acp/server.py

# attributes set on other libraries' objects, for them to read
_.isolation_level  # agentcli/threads/sqlite_backend.py: sqlite3
_.soft_wrap  # agentcli/ui/__init__.py: Rich
_.no_wrap  # agentcli/ui/event_renderer.py: Rich
_.on_text_changed  # agentcli/ui/message_input.py: prompt_toolkit
_.process_renderables  # agentcli/ui/synchronized_output.py: Rich calls a render hook
_._pool  # tools/deadline.py: concurrent.futures

# the built-in tools, for the tests and bench/ (public interface of agentcli_tools)
builtin_tools  # tools/registry.py

# Settings fields read by name (getattr(settings, f"hooks_{attr}")): config/hook_tables.py
_.hooks_pre_tool_use
_.hooks_post_tool_use
_.hooks_user_prompt_submit
_.hooks_stop

# fields written out by dataclasses.asdict only: `review --json`'s keys
parked_at  # agentcli/session/inbox.py (WaitingCall)
