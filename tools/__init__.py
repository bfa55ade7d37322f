"""The built-in tool library: plain LangChain tools; see ``tools.registry``."""
