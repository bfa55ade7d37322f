"""The audit: one record per decided call, chained and anchored so that an edit or a
deletion shows, read back across threads, verified, and turned into rule suggestions.

records.py  what a record holds and who decided (written by the graph's nodes)
chain.py    each record's hash chained to the one before, sealed with the store's key
anchor.py   where each thread's chain ends, kept in the store (threads/audit_anchors.py)
log.py      the records of many threads, with what ran (`agentcli audit`)
verify.py   the chains checked against their anchors (`agentcli audit verify`)
suggest.py  scoped allow rules proposed from what people approved (`agentcli audit suggest`)

It sits between the agent (which writes records) and the threads (which keep them): a
thread's state is read by whoever calls log.py and verify.py (session/history.py).
"""
