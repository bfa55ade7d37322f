"""Keeping a thread inside the model's context window: the window, the estimate, the summary."""
