"""Files in the workspace that other programs run on their own, outside the sandbox and any
review: direnv's `.envrc` when you enter the folder, an editor's tasks and settings, git's
hooks and attributes, CI pipelines when you push. A write to one is a command run later by
someone else, so no approval mode writes one unasked (approval_modes.py, for the file tools;
bash/outside_box.py, for a command that names one).
"""

from __future__ import annotations

import fnmatch

# workspace-relative globs (fnmatch: `*` also matches `/`)
AUTORUN = (
    ".envrc",
    "*/.envrc",
    ".git",
    ".git/*",
    "*/.git/*",
    ".gitattributes",
    "*/.gitattributes",
    ".gitmodules",
    ".vscode/*",
    ".idea/*",
    ".devcontainer/*",
    ".github/*",
    ".gitlab-ci.yml",
    ".pre-commit-config.yaml",
    ".husky/*",
)


def runs_on_its_own(rel: str) -> bool:
    """Whether the workspace-relative path (where it leads, normalised) is such a file."""
    rel = rel.strip("/")
    return any(fnmatch.fnmatchcase(rel, glob) for glob in AUTORUN)
