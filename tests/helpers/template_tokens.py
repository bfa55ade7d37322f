"""A model server's own count of a request's prompt tokens, for the scripted server's
`count=`: the request rendered the way a ChatML chat template renders it (SmolLM2's, Qwen's:
`<|im_start|>role\\ncontent<|im_end|>\\n` a message), the tools' JSON in the system message
as llama.cpp's Jinja templates put them, an assistant's calls as `<tool_call>` blocks, then
counted with a real tokenizer:

- `cl100k`: OpenAI's cl100k_base (the one agentcli estimates with; always here);
- `GGUFTokenizer(python, gguf)`: the model's own, read from its GGUF by llama-cpp-python in
  the real-model suite's virtualenv (tests/realmodel/run.sh makes it), in a child process:
  SmolLM2's tokenizer counts about 12% more than cl100k_base for agentcli's requests.
"""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any

from agentcli.agent.model.token_count import text_tokens


def render(body: dict[str, Any]) -> str:
    """The prompt a ChatML template makes of a chat-completions request."""
    messages = list(body.get("messages") or [])
    tools = body.get("tools") or []
    parts = []
    if tools:
        listed = "\n".join(json.dumps(tool) for tool in tools)
        system = messages.pop(0)["content"] if messages and messages[0]["role"] == "system" else ""
        system += f"\n\n# Tools\n\n<tools>\n{listed}\n</tools>"
        parts.append(f"<|im_start|>system\n{system}<|im_end|>\n")
    for message in messages:
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content)
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            content += f"\n<tool_call>\n{json.dumps(function)}\n</tool_call>"
        parts.append(f"<|im_start|>{message.get('role')}\n{content}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def cl100k(body: dict[str, Any]) -> int:
    return text_tokens(render(body))


GGUF_COUNTER = """
import sys, llama_cpp
vocab = llama_cpp.Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)
for line in sys.stdin:
    text = __import__("json").loads(line)
    print(len(vocab.tokenize(text.encode(), add_bos=False, special=True)), flush=True)
"""


class GGUFTokenizer:
    """The model's own tokenizer, in a child process of the real-model virtualenv."""

    def __init__(self, python: str, gguf: str) -> None:
        self.process = subprocess.Popen(
            [python, "-c", GGUF_COUNTER, gguf],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lock = threading.Lock()  # the scripted server answers on many threads

    def __call__(self, body: dict[str, Any]) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        with self.lock:
            self.process.stdin.write(json.dumps(render(body)) + "\n")
            self.process.stdin.flush()
            return int(self.process.stdout.readline())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
