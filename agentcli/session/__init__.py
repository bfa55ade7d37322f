"""Driving one thread, locally or on a LangGraph server: messages in, typed events out."""
