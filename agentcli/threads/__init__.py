"""Where threads live: the store interface, the SQLite and PostgreSQL backends, locks, the call
journal, transcripts, and every use of LangGraph internals."""
