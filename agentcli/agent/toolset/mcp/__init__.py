"""Tools from MCP servers: connecting, their results as text, their logs."""
