"""agentcli's own tables, and the SQL both backends share (written with `?` placeholders).

The schema changes only through named, append-only migrations: MIGRATIONS for both
backends, then each backend's OWN_MIGRATIONS (sqlite_backend.py, postgres_backend.py).
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_threads",
        """CREATE TABLE agentcli_threads (
            thread_id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'idle',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            workspace TEXT NOT NULL,
            model TEXT NOT NULL,
            messages INTEGER NOT NULL DEFAULT 0,
            last_error TEXT
        );
        CREATE INDEX agentcli_threads_updated ON agentcli_threads(updated_at);""",
    ),
    (
        "002_text",  # what people wrote and read, for search, kept apart from checkpoints
        """CREATE TABLE agentcli_text (
            thread_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX agentcli_text_thread ON agentcli_text(thread_id, turn);
        ALTER TABLE agentcli_threads ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;""",
    ),
    (
        "003_usage",
        """ALTER TABLE agentcli_threads ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE agentcli_threads ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;""",
    ),
    (
        "004_calls",  # call_journal.py: each tool call's run, written before the tool starts
        """CREATE TABLE agentcli_calls (
            thread_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            state TEXT NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (thread_id, call_id)
        );""",
    ),
    (
        "005_call_process",  # call_journal.py: the process that supervises a shell call's run
        """ALTER TABLE agentcli_calls ADD COLUMN host TEXT;
        ALTER TABLE agentcli_calls ADD COLUMN boot TEXT;
        ALTER TABLE agentcli_calls ADD COLUMN pid INTEGER;
        ALTER TABLE agentcli_calls ADD COLUMN pid_started TEXT;""",
    ),
    (
        "006_note",  # said to the model with the next message (undo --files-only)
        "ALTER TABLE agentcli_threads ADD COLUMN note TEXT;",
    ),
    (
        "007_audit_anchor",  # audit_anchors.py: where each thread's audit chain ends
        """CREATE TABLE agentcli_audit_anchor (
            thread_id TEXT PRIMARY KEY,
            records INTEGER NOT NULL,
            hash TEXT NOT NULL,
            seal TEXT NOT NULL,
            at TEXT NOT NULL
        );""",
    ),
    (
        "008_secrets",  # store.py (Store.secret): the store's own keys (the approval key)
        """CREATE TABLE agentcli_secrets (
            name TEXT PRIMARY KEY,
            secret TEXT NOT NULL,
            at TEXT NOT NULL
        );""",
    ),
    (
        "009_thread_server",  # the model server a thread runs on, never its key (thread_origin.py)
        "ALTER TABLE agentcli_threads ADD COLUMN base_url TEXT;",
    ),
    (
        "010_review_preview",  # store.py (Store.preview): a parked thread's review, drawn early
        """CREATE TABLE agentcli_review_preview (
            thread_id TEXT PRIMARY KEY,
            preview TEXT NOT NULL
        );""",
    ),
]


def escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
