"""The agent: the LangGraph graph, its state, the review and approve nodes, the journalled
tools node, the chat model and the session's tools."""
