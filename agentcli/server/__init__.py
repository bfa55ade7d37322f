"""What LangGraph Server loads: the agent graph (`langgraph.json`) and its call journal."""
