"""Approval policy: for each tool call, allow, ask or deny, and which rule, flag or list said so."""
