"""Tool-choice accuracy with full and terse tool descriptions (issue 29, item 1): what a
model loses when the tools are described tersely to fit a small window.

Against a real model server (not the scripted one: its choices are scripted), each of
PROMPTS, which one built-in tool answers, is asked once with the 8 built-in tools described
in full and once tersely (agentcli/agent/context/fixed_part.py), with `tool_choice = "auto"`,
unstreamed, temperature 0. A pick is right when the first call names the expected tool.

    .venv/bin/python bench/tool_choice.py --base-url http://127.0.0.1:8000/v1 --model m
"""

from __future__ import annotations

import argparse
import json
import time

import httpx
from _common import machine, table

from agentcli.agent.agent_graph import SYSTEM
from agentcli.agent.context.fixed_part import schema_of, terse

PROMPTS = [
    ("Show me what is in the file notes.txt.", "read_file"),
    ("Create a file hello.txt containing the word hello.", "write_file"),
    ("In config.py, replace DEBUG = True with DEBUG = False.", "edit_file"),
    ("What files are in the src folder?", "list_dir"),
    ("Find every line mentioning TODO under src.", "search_files"),
    ("Run the tests with pytest.", "shell"),
    ("Get the page https://example.com and tell me its title.", "fetch_url"),
    ("What is 1234 * 5678?", "calculator"),
]


def pick(client: httpx.Client, url: str, model: str, prompt: str, tools: list[dict]) -> str:
    body = {
        "model": model, "temperature": 0, "max_tokens": 96, "tool_choice": "auto",
        "tools": tools,
        "messages": [{"role": "system", "content": SYSTEM.format(workspace="/home/me/project")},
                     {"role": "user", "content": prompt}],
    }  # fmt: skip
    answer = client.post(url, json=body)
    if answer.status_code != 200:
        return f"HTTP {answer.status_code}"
    message = answer.json()["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    return calls[0]["function"]["name"] if calls else "(no call)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="model")
    args = parser.parse_args()
    from agentcli_tools.registry import BUILTIN_TOOLS

    full = [schema_of(tool) for tool in BUILTIN_TOOLS.values()]
    forms = {"full": full, "terse": [terse(schema) for schema in full]}
    url = args.base_url.rstrip("/") + "/chat/completions"
    rows, right = [], dict.fromkeys(forms, 0)
    start = time.monotonic()
    with httpx.Client(timeout=600) as client:
        for prompt, expected in PROMPTS:
            picks = {
                form: pick(client, url, args.model, prompt, tools) for form, tools in forms.items()
            }
            for form, name in picks.items():
                right[form] += name == expected
            rows.append([expected, picks["full"], picks["terse"]])
    rows.append(
        ["right", f"{right['full']} of {len(PROMPTS)}", f"{right['terse']} of {len(PROMPTS)}"]
    )
    print(f"{args.model} at {args.base_url}; {time.monotonic() - start:.0f} s; {machine()}\n")
    print(table(["expected", "full descriptions", "terse descriptions"], rows))
    print(json.dumps(right))


if __name__ == "__main__":
    main()
