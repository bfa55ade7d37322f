"""Plan mode: the model plans every step at once, a person reviews the plan, the tasks run
as a graph (LLMCompiler): the `plan` tool (plan_tool.py), plans read and checked
(plan_check.py), results substituted into later tasks (substitution.py), the plan's review
(plan_review.py), what its decisions make of it (plan_decisions.py), and its run and join
(plan_run.py, plan_task.py, run by ../executor.py; where results may go: result_targets.py).

The tool's name and how its result begins are shared with the front ends (agentcli/events.py)."""

PLAN_FLAG = "plan"  # a user message's additional_kwargs key: this turn plans
MAX_TASKS = 50  # tasks in one plan


def graph_steps(max_steps: int, max_replans: int) -> int:
    """LangGraph's recursion limit for one run: per model turn three steps and two per
    further group of its calls (agent/executor.py; at most one group per call, bounded
    here as for a plan's tasks), and for each plan the approve step, two per wave (at most
    one wave per task) and the join."""
    return max_steps * (3 + 2 * MAX_TASKS) + 10 + (max_replans + 1) * (2 * MAX_TASKS + 4)
