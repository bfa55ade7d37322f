"""The tool loader: built-ins filtered by config, tools from custom modules, clashes, errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from agentcli_tools.registry import BUILTIN_TOOLS

from agentcli.agent.toolset.loading import LoadedTool, load_tools
from agentcli.config import Settings, load_settings
from agentcli.errors import ConfigError

TOOL_MODULE = '''
from langchain_core.tools import tool
from agentcli_tools.calc import calculator  # a re-exported built-in is not loaded twice

@tool
def shout(text: str) -> str:
    """Shout.

    Args:
        text: what to shout
    """
    return text.upper()

@tool
async def whisper(text: str) -> str:
    """Whisper (async only).

    Args:
        text: what to whisper
    """
    return text.lower()
'''


def config(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "conf" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return load_settings(path)


def module_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def load(settings: Settings) -> tuple[dict[str, LoadedTool], list[str]]:
    warnings: list[str] = []
    loaded = load_tools(settings, warn=warnings.append)
    return {item.name: item for item in loaded}, warnings


def test_by_default_every_builtin_tool() -> None:
    tools, warnings = load(Settings())
    assert list(tools) == list(BUILTIN_TOOLS)
    assert {item.source for item in tools.values()} == {"builtin"} and warnings == []
    assert all(tools[name].tool is BUILTIN_TOOLS[name] for name in tools)


def test_enabled_keeps_only_those_builtins_and_disabled_removes() -> None:
    tools, warnings = load(
        Settings(enabled=["shell", "read_file", "calculator"], disabled=["shell", "nope"])
    )
    assert list(tools) == ["read_file", "calculator"]  # registry order, not config order
    assert warnings == ["tools.disabled: no tool is named 'nope'"]


def test_an_unknown_enabled_tool_is_a_config_error(tmp_path: Path) -> None:
    settings = config(tmp_path, '[tools]\nenabled = ["read_file", "raed_file"]\n')
    unknown = (
        r"tools.enabled = .*: no built-in tool is named 'raed_file' \(did you mean 'read_file'"
    )
    with pytest.raises(ConfigError, match=unknown) as err:
        load_tools(settings, warn=print)
    assert str(settings.config_path) in str(err.value)


def test_a_module_by_name_adds_its_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module_file(tmp_path / "lib" / "agentcli_test_shouting.py", TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    settings = config(tmp_path, '[tools]\nmodules = ["agentcli_test_shouting"]\n')
    tools, warnings = load(settings)
    assert list(tools)[-2:] == ["shout", "whisper"] and len(tools) == len(BUILTIN_TOOLS) + 2
    assert tools["shout"].source == "module:agentcli_test_shouting"
    assert tools["calculator"].source == "builtin" and warnings == []
    assert tools["shout"].tool.invoke({"text": "hi"}) == "HI"
    # an async-only tool runs from synchronous code, as the graph's ToolNode calls it
    assert tools["whisper"].tool.invoke({"text": "HeLLo"}) == "hello"


def test_a_py_file_relative_to_the_config_folder_with_tools_list(tmp_path: Path) -> None:
    module_file(
        tmp_path / "conf" / "extra" / "more.py",
        TOOL_MODULE + "\nTOOLS = [whisper]\n",
    )
    settings = config(tmp_path, '[tools]\nmodules = ["extra/more.py"]\nenabled = ["list_dir"]\n')
    tools, warnings = load(settings)
    assert [(name, item.source) for name, item in tools.items()] == [
        ("list_dir", "builtin"),
        ("whisper", "module:extra/more.py"),
    ]
    assert warnings == []


def test_a_module_without_tools_is_a_warning(tmp_path: Path) -> None:
    module_file(tmp_path / "conf" / "empty.py", "X = 1\n")
    tools, warnings = load(config(tmp_path, '[tools]\nmodules = ["empty.py"]\n'))
    assert len(tools) == len(BUILTIN_TOOLS)
    assert warnings == ["tools.modules: 'empty.py' defines no LangChain tools"]


def test_two_tools_with_one_name_are_a_config_error(tmp_path: Path) -> None:
    module_file(
        tmp_path / "conf" / "mine.py",
        '''
        from langchain_core.tools import tool

        @tool
        def calculator(expression: str) -> str:
            """My own calculator.

            Args:
                expression: the sum
            """
            return "42"
        ''',
    )
    settings = config(tmp_path, '[tools]\nmodules = ["mine.py"]\n')
    with pytest.raises(
        ConfigError,
        match=r"two tools are named 'calculator' \(builtin and "
        r"module:mine.py\): rename one or leave the built-in out",
    ) as err:
        load_tools(settings, warn=print)
    assert str(settings.config_path) in str(err.value)
    # disabled names go, whatever their source: here both calculators
    tools, _ = load(config(tmp_path, '[tools]\nmodules = ["mine.py"]\ndisabled = ["calculator"]\n'))
    assert "calculator" not in tools


@pytest.mark.parametrize(
    ("entry", "content", "message"),
    [
        ("broken.py", "raise RuntimeError('no database')\n", r"RuntimeError: no database"),
        ("typo.py", "def f(:\n", r"SyntaxError"),
        ("missing.py", None, r"FileNotFoundError: no such file .*missing.py"),
        ("agentcli_no_such_module", None, r"ModuleNotFoundError: No module named"),
        ("bad_list.py", "TOOLS = ['read_file']\n", r"has a TOOLS that is not a list of LangChain"),
    ],
)
def test_a_module_that_fails_is_a_config_error_naming_it(
    tmp_path: Path, entry: str, content: str | None, message: str
) -> None:
    if content is not None:
        module_file(tmp_path / "conf" / entry, content)
    settings = config(tmp_path, f'[tools]\nmodules = ["{entry}"]\n')
    with pytest.raises(ConfigError, match=message) as err:
        load_tools(settings, warn=print)
    assert f"'{entry}'" in str(err.value) and str(settings.config_path) in str(err.value)
    assert "\n" not in str(err.value)
