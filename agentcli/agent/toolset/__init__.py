"""The tools a session has: built-ins, custom modules, MCP servers; their names checked, the
sandbox chosen for their processes."""
