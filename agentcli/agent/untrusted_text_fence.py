"""Text from elsewhere put into what the model reads, between tags it cannot close early.

AGENTS.md, a file attached with `@path` and the output of a `!command` are workspace text:
the person's, but written by anyone who could write to the workspace. Each goes to the model
between an opening and a closing tag; a closing tag inside the text is broken up, so the
text cannot end its own block and go on as if the person, or agentcli, had written the rest.
"""

from __future__ import annotations

import json
import re


def fence(tag: str, text: str, **attrs: str | int) -> str:
    """`<tag k="v">` + text + `</tag>`; `</tag` inside the text is written `<\\/tag`."""
    closing = re.compile(rf"</(\s*){re.escape(tag)}", re.IGNORECASE)
    body = closing.sub(lambda m: f"<\\/{m.group(1)}{tag}", text)
    shown = "".join(
        f" {key}={json.dumps(value, ensure_ascii=False)}" for key, value in attrs.items()
    )
    newline = "" if body.endswith("\n") or not body else "\n"
    return f"<{tag}{shown}>\n{body}{newline}</{tag}>"
