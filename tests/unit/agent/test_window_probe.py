"""The context window asked of the model server (context/window.py), as vLLM and Ollama tell
it (llama.cpp's /props: test_compaction.py)."""

from __future__ import annotations

import pytest

from agentcli.agent.context.window import OLLAMA_DEFAULT, probe
from tests.helpers.scripted_server import ScriptedServer


def test_vllm_tells_max_model_len_in_its_model_list() -> None:
    with ScriptedServer(context_window=6144, window_api="vllm") as vllm:
        assert probe(vllm.base_url, "scripted") == 6144
    with ScriptedServer(context_window=6144, window_api="vllm", announce_window=False) as bare:
        assert probe(bare.base_url, "scripted") is None  # a model list without the field


def test_ollama_tells_num_ctx_when_the_model_sets_it() -> None:
    with ScriptedServer(context_window=12288, window_api="ollama") as ollama:
        assert probe(ollama.base_url, "scripted") == 12288


@pytest.mark.parametrize(("trained", "window"), [(32768, OLLAMA_DEFAULT), (2048, 2048)])
def test_ollama_without_num_ctx_is_its_default_capped_by_the_trained_length(
    trained: int, window: int
) -> None:
    with ScriptedServer(context_window=9999, window_api="ollama", ollama_trained=trained) as s:
        s.ollama_num_ctx = None  # the Modelfile sets no num_ctx: Ollama runs its default
        assert probe(s.base_url, "scripted") == window


def test_ollama_without_the_model_says_nothing() -> None:
    with ScriptedServer(context_window=12288, window_api="ollama") as ollama:
        assert probe(ollama.base_url, "some-other-model") is None  # 404 model not found


def test_a_server_that_says_nothing_leaves_it_unknown() -> None:
    for api in ("llama.cpp", "vllm", "ollama"):
        with ScriptedServer(context_window=5000, window_api=api, announce_window=False) as s:
            assert probe(s.base_url, "scripted") is None
