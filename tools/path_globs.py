"""Whether a rule's glob matches a workspace-relative path, as the approval rules use it."""

from __future__ import annotations

import fnmatch


def path_matches(rel: str, pattern: str, *, protect: bool) -> bool:
    """Does a rule's glob match the workspace-relative path ``rel``?

    The glob is fnmatch's: ``*`` also matches ``/``, so ``docs/*`` covers all of docs. A
    leading ``./`` and a trailing ``/`` are ignored, and ``**/x`` also matches ``x`` at the root.
    Allow rules (``protect=False``) match the whole path, case-sensitively, as Linux names are.
    Deny and ask rules (``protect=True``) err on the closed side: case is ignored, a glob
    without ``/`` also matches the last name at any depth (``.env`` covers ``sub/.env``), and a
    glob that matches a folder covers everything inside it (``.git`` covers ``.git/config``).
    """
    glob = pattern.strip()
    while glob.startswith("./"):
        glob = glob[2:]
    glob = glob.rstrip("/") or "."
    globs = [glob, glob[3:]] if glob.startswith("**/") else [glob]
    candidates = [rel]
    if protect:
        candidates = [rel.lower()]
        parts = rel.split("/")
        candidates += ["/".join(parts[:n]).lower() for n in range(1, len(parts))]
        if "/" not in glob:
            candidates += [part.lower() for part in parts]
        globs = [g.lower() for g in globs]
    return any(fnmatch.fnmatchcase(c, g) for c in candidates for g in globs)
