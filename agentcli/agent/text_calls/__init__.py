"""Tool calls a model wrote as text: recovered from its answer, held back while streaming,
and the text-mode prompt for models without native tool calling."""
