"""A task's result in an argument a program reads as code or as options (issue 25, item 3).

The result goes in as one quoted word, so bash never reads it as code; but the program does:
`sed -n $1` runs a result `1e touch PWNED`, `make $1` one `X=$(shell touch PWNED)`, `sort $1`
writes where `-oPWNED` says. Every payload here is first run under real bash and the real
program in a scratch folder, where it creates PWNED; then agentcli must stop it: before
review when the reference stands where the program reads code, an option's value, or where
the program is not one agentcli knows (PAYLOADS_PLACED); once the result is in, when the result
turns a data operand into an option (PAYLOADS_OPTIONS). The e2e tests run some through `run --plan`
and `review --approve all`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.agent.plan.plan_check import read_plan
from agentcli.agent.plan.result_targets import moved
from agentcli.agent.plan.substitution import substitute
from agentcli.policy.bash.program_table import PROGRAMS
from tests.e2e.conftest import Agent
from tests.security.test_plan_results import _shell_tool, approve_plan, plan_goes_back

# (template a person approves, a result from a page) where the program reads the result as code
PAYLOADS_PLACED = [
    ("sed -n $1 notes.txt", "1e touch PWNED"),
    ("sed -n $1 notes.txt", "1w PWNED"),
    ("sed $1 notes.txt", "s/hi/x/w PWNED"),
    ("sed -ie $1 notes.txt", "1e touch PWNED"),  # -i with the suffix `e`: $1 is the script
    ("sed -n -- $1 notes.txt", "1e touch PWNED"),
    ("make $1", "--eval=$(shell touch PWNED)"),
    ("make $1", "X=$(shell touch PWNED)"),
    ("make -f Makefile $1", "X=$(shell touch PWNED)"),
    ("tar -xf a.tar $1", "--to-command=touch PWNED"),
    ("tar -cf x.tar notes.txt --checkpoint=1 $1", "--checkpoint-action=exec=touch PWNED"),
    ("gdb -batch $1", "-ex=shell touch PWNED"),
    ("gdb -batch -nx $1", "--eval-command=shell touch PWNED"),
    ("vim -es $1", "+!touch PWNED"),
    ("vim -es $1 '+q!'", "+w PWNED"),
    ("test -v $1", "a[$(touch PWNED)]"),
    ("[ -v $1 ]", "a[$(touch PWNED)]"),
    ("sqlite3 :memory: $1", ".shell touch PWNED"),
    ("sqlite3 :memory: $1", ".system touch PWNED"),
    ("xargs -a notes.txt $1 PWNED", "touch"),
    ("ionice -c3 $1 PWNED", "touch"),
    ("taskset 1 $1 PWNED", "touch"),
    ("script -qc $1 /dev/null", "touch PWNED"),
    ("dd if=notes.txt $1", "of=PWNED"),
    ("find . -maxdepth 0 $1 PWNED", "-fprint"),
    ("zip -q x.zip notes.txt -T $1", "--unzip-command=touch PWNED"),
    ("curl -sS file:///etc/hostname $1", "-oPWNED"),
    ("sort -o $1 notes.txt", "PWNED"),  # an option's value: a file sort writes
    ("git -c $1 x", "alias.x=!touch PWNED"),
    ("tar -xf a.tar --checkpoint=1 $1", "--checkpoint-action=exec=touch PWNED"),
    ("nice -n 5 $1 PWNED", "touch"),
    ("cp notes.txt $1", "PWNED"),  # the file it writes, any file (a shell's startup file)
    ("tee $1 < notes.txt", "PWNED"),
    # data for its own program, but its output becomes code for another
    ('bash -c "$(echo $1)"', "touch PWNED"),
    ("$(echo $1)", "touch PWNED"),
    ("x=$(echo $1); eval $x", "touch PWNED"),
    ("sh <(echo $1)", "touch PWNED"),
    ("echo $1 | sh", "touch PWNED"),
    ("echo $1 | cat | bash", "touch PWNED"),
    ("printf '%s\\n' $1 | sqlite3", ".shell touch PWNED"),
    ("echo $1 | sed -n -f - notes.txt", "1e touch PWNED"),
    ("echo $1 | xargs touch", "PWNED"),
    ("echo `echo $1`", "`; touch PWNED; `"),
    ("( echo $1 ) | sh", "touch PWNED"),
    ("{ echo $1; } | sh", "touch PWNED"),
    ("if true; then echo $1; fi | sh", "touch PWNED"),
    ("f() { echo $1; }; f | sh", "touch PWNED"),
]
# a data operand, where a result that starts with `-` becomes an option
PAYLOADS_OPTIONS = [
    ("git diff $1", "--output=PWNED"),
    ("git log $1", "--output=PWNED"),
    ("git show $1", "--output=PWNED"),
    ("git log --oneline $1", "--output=PWNED"),
    ("git grep -e hi $1", "-Otouch PWNED"),
    ("sort $1 notes.txt", "-oPWNED"),
    ("sort notes.txt $1", "--output=PWNED"),
    ("sort -n notes.txt $1", "-oPWNED"),
    ("sed -n -e p $1 notes.txt", "--expression=1e touch PWNED"),
    ("sed -n -e p $1 notes.txt", "-e1w PWNED"),
    ("printf $1 x", "-va[$(touch PWNED)]"),
    ("cat notes.txt | sort $1", "-oPWNED"),
]
# templates whose reference is data and stays allowed: the result is a file, a pattern, a word
STILL_DATA = [
    "cat $1", "wc -l $1", "head -n 3 $1", "grep -i hi $1", "ls -la $1", "sort -n $1",
    "git log --oneline $1", "git diff $1", "git add $1", "rm -f $1", "sed -n -e p $1",
    "sed -n -e p -- $1", "test -f $1 && echo yes", "echo $1 | wc -c", "printf '%s' $1",
    "diff notes.txt $1", "/bin/cat $1", "cat $1 | sort | head -n 3", "echo $1 | grep -c x",
    "printf '%s' $1 > copy.txt",
]  # fmt: skip


def scratch(where: Path) -> Path:
    """A folder with what the payloads work on: notes.txt, a.tar, a Makefile, a git repo."""
    (where / "notes.txt").write_text("hi\n")
    (where / "Makefile").write_text("all:\n\t@true\ntest:\n\t@true\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(where), "GIT_CONFIG_NOSYSTEM": "1"}
    for command in (
        "tar -cf a.tar notes.txt",
        "git init -q . && git add notes.txt Makefile",
        "git -c user.email=a@b -c user.name=a commit -qm x",
    ):
        subprocess.run(["bash", "-c", command], cwd=where, check=True, env=env, timeout=30)
    return where


def run_real(template: str, result: str, where: Path) -> str:
    """The command with the result in, run under bash in `where`; what it ran."""
    ran = substitute("shell", {"command": template}, {1: result})["command"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(where), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["bash", "-c", ran], cwd=where, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, timeout=20,
    )  # fmt: skip
    return ran


def checked(template: str) -> str | object:
    tasks = [
        {"id": 1, "tool": "shell", "args": {"command": "cat page.txt"}},
        {"id": 2, "tool": "shell", "args": {"command": template}},
    ]
    return read_plan({"tasks": tasks}, {"shell": _shell_tool()})


class TestAResultCannotBecomeCode:
    @pytest.mark.parametrize(("template", "result"), PAYLOADS_PLACED + PAYLOADS_OPTIONS)
    def test_the_payload_runs_code_or_writes_in_the_real_program(
        self, tmp_path: Path, template: str, result: str
    ) -> None:
        ran = run_real(template, result, scratch(tmp_path))
        assert (tmp_path / "PWNED").exists(), ran

    @pytest.mark.parametrize(("template", "result"), PAYLOADS_PLACED)
    def test_a_reference_where_the_program_reads_code_is_refused_before_review(
        self, template: str, result: str
    ) -> None:
        plan = checked(template)
        assert isinstance(plan, str) and plan.startswith("task 2 (shell): $1 in the command")

    @pytest.mark.parametrize(("template", "result"), PAYLOADS_OPTIONS)
    def test_a_result_that_makes_an_operand_an_option_is_refused_once_it_is_in(
        self, template: str, result: str
    ) -> None:
        assert not isinstance(checked(template), str)  # the operand is data: the plan stands
        ran = substitute("shell", {"command": template}, {1: result})
        refusal = moved("shell", {"command": template}, ran, {1}, {1: result})
        assert refusal is not None and "starts with '-'" in refusal
        harmless = substitute("shell", {"command": template}, {1: "notes.txt"})
        assert moved("shell", {"command": template}, harmless, {1}, {1: "notes.txt"}) is None

    @pytest.mark.parametrize("template", STILL_DATA)
    def test_a_data_operand_still_takes_a_result(self, template: str) -> None:
        assert not isinstance(checked(template), str), checked(template)

    @pytest.mark.parametrize("template", ["./cat $1", "/tmp/cat $1", "$CAT $1", "$(echo cat) $1"])
    def test_a_program_that_is_not_the_system_s_is_unknown(self, template: str) -> None:
        assert isinstance(checked(template), str), template

    @settings(max_examples=200, deadline=None)
    @given(st.from_regex(r"[a-z][a-z0-9_.-]{0,12}", fullmatch=True))
    def test_an_argument_of_a_program_agentcli_does_not_know_is_never_data(self, name: str) -> None:
        if name in PROGRAMS:
            return
        for template in (f"{name} $1", f"{name} -x $1", f"{name} run $1"):
            assert isinstance(checked(template), str), template


# -- through the installed command -----------------------------------------------------


E2E_PLACED = [
    PAYLOADS_PLACED[0],
    PAYLOADS_PLACED[4],
    PAYLOADS_PLACED[6],
    PAYLOADS_PLACED[8],
    PAYLOADS_PLACED[10],
    PAYLOADS_PLACED[14],
    PAYLOADS_PLACED[17],
]
E2E_OPTIONS = [PAYLOADS_OPTIONS[5], PAYLOADS_OPTIONS[8], PAYLOADS_OPTIONS[10]]


@pytest.mark.parametrize(("template", "result"), E2E_PLACED)
def test_e2e_a_plan_that_puts_a_result_where_code_goes_never_runs(
    agent: Agent, template: str, result: str
) -> None:
    scratch(agent.workspace)
    (agent.workspace / "page.txt").write_text(result)
    plan_goes_back(agent, template)


@pytest.mark.parametrize(("template", "result"), E2E_OPTIONS)
def test_e2e_an_approved_plan_does_not_run_a_result_that_is_an_option(
    agent: Agent, template: str, result: str
) -> None:
    scratch(agent.workspace)
    (agent.workspace / "page.txt").write_text(result)
    tasks = approve_plan(agent, template)
    assert not (agent.workspace / "PWNED").exists()
    assert tasks[2]["state"] == "refused" and "starts with '-'" in tasks[2]["why"], tasks[2]
    shown = json.dumps(tasks[2])
    assert "a person must see that value" in shown


# a folder written before the reference, and a result whose `..` leaves it: the real program
# changes (or reads) a file outside, which a file tool would refuse
PAYLOADS_FOLDERS = [
    ("rm -f notes/$1", "../keep.txt"),
    ("rm -f notes/$1", "a/../../keep.txt"),
    ("rm -f ./notes/$1", "../keep.txt"),
    ("touch notes/$1", "../PWNED"),
    ("cp keep.txt notes/$1", "a/../../PWNED"),
    ("mkdir -p notes/$1", "../../PWNED"),
]


@pytest.mark.parametrize(("template", "result"), PAYLOADS_FOLDERS)
def test_a_result_cannot_take_a_shell_task_out_of_its_folder(
    tmp_path: Path, template: str, result: str
) -> None:
    where = tmp_path / "work"
    (where / "notes" / "a").mkdir(parents=True)
    (where / "keep.txt").write_text("kept")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    run_real(template, result, where)
    after = sorted(p.name for p in tmp_path.rglob("*"))
    assert after != before and (not (where / "keep.txt").exists() or "PWNED" in after)
    ran = substitute("shell", {"command": template}, {1: result})
    refusal = moved("shell", {"command": template}, ran, {1}, {1: result})
    if template.startswith("cp"):  # cp's operands are never data: refused before review
        assert isinstance(checked(template), str)
    else:  # the operand is data: the plan stands, and the folder is checked once it is in
        assert not isinstance(checked(template), str)
        assert refusal is not None and "leaves the folder" in refusal


def test_e2e_a_result_cannot_delete_outside_the_folder_approved(agent: Agent) -> None:
    (agent.workspace / "notes").mkdir()
    (agent.workspace / "keep.txt").write_text("kept")
    (agent.workspace / "page.txt").write_text("../keep.txt")
    tasks = approve_plan(agent, "rm -f notes/$1")
    assert (agent.workspace / "keep.txt").read_text() == "kept"
    assert tasks[2]["state"] == "refused" and "leaves the folder" in tasks[2]["why"], tasks[2]
