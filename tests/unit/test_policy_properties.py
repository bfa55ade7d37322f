"""Property-based: no chained, substituted or redirected command passes an allow rule."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.policy import Policy, shell_commands

ALLOW_GIT_STATUS = Policy.build(
    rules=[{"tool": "shell", "match": "git status*", "decision": "allow"}]
)
SEPARATORS = [";", "&&", "||", "|", "&", "\n", "\r", "$(", "`", ">", ">>", "<", "<(", "${", "|&"]
words = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=400)
@given(separator=st.sampled_from(SEPARATORS), before=words, after=words)
def test_a_chain_after_an_allowed_prefix_is_never_allowed(
    separator: str, before: str, after: str
) -> None:
    command = f"git status{before}{separator}{after}"
    verdict = ALLOW_GIT_STATUS.decide("shell", {"command": command})
    if verdict.decision == "allow":  # only possible when the separator sat inside quotes
        parts = shell_commands(command)
        assert parts is not None and len(parts) == 1
        assert separator not in ("\n", "\r", "$(", "`", ">", ">>", "<", "<(", "${")


@settings(max_examples=300)
@given(
    first=st.sampled_from(["ls", "echo hi", "true"]),
    separator=st.sampled_from([";", "&&", "||", "|", "&"]),
)
def test_deny_rules_see_every_part_of_a_chain(first: str, separator: str) -> None:
    policy = Policy.build(
        rules=[{"tool": "shell", "match": "rm *", "decision": "deny"}], auto_approve=True
    )
    assert policy.decide("shell", {"command": f"{first} {separator} rm -rf /"}).decision == "deny"
