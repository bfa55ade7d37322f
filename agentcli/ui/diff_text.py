"""A unified diff as the terminal shows it: every character that would not draw as itself
is a mark (agentcli/terminal_text.py), and the diff's own layout is left as layout."""

from __future__ import annotations

from agentcli.terminal_text import mark, visible


def diff_shown(diff: str) -> str:
    """A file's diff made visible. Its lines' sign column is the diff's layout (a blank
    context line is one space: not a mark). In a line of the file, a tab is layout, spaces
    up to the next tab stop of the line, as an editor or `git diff` on a terminal shows it:
    the review approves the file's lines, and every character that draws nothing else is a
    mark. The blanks that end an added or removed line are marks (as `git diff` flags
    them), so a change of whitespace alone shows. Header lines (file names, hunks, notes)
    show every tab and trailing blank as a mark."""
    out: list[str] = []
    in_hunk = False
    for line in diff.split("\n"):
        if line.startswith("diff "):  # git's next file: its header lines follow
            in_hunk = False
        in_hunk = in_hunk or line.startswith("@@")
        sign = line[:1]
        if in_hunk and sign in (" ", "-", "+"):
            out.append(sign + visible(line[1:], trailing=sign != " ", tabs=True))
        else:
            out.append(visible(line, trailing=True).replace("\t", mark("\t")))
    return "\n".join(out)
