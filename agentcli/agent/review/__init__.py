"""The review: every tool call passes here before it runs. The node, what it checks of a
call and of an answer, sealed approvals, and the audit of each decision."""
