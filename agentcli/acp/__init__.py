"""`agentcli acp`: the Agent Client Protocol front end."""
