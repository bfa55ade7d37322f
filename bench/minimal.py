"""The least a script can do with agentcli's libraries: bench/run.py's floor for `agentcli run`.

It imports langgraph and langchain_openai, builds a one-node StateGraph compiled with a
SqliteSaver, makes one streamed ChatOpenAI call in a new thread and prints the answer.
With --gc it also handles Python's garbage collector the way agentcli does
(agentcli/cli/gc_tuning.py: off while importing, frozen at exit), for a like-for-like floor.

    .venv/bin/python bench/minimal.py BASE_URL DB_FILE MESSAGE [--gc]
"""

import gc
import sys

GC = "--gc" in sys.argv[4:]
if GC:
    gc.disable()

import sqlite3  # noqa: E402
import uuid  # noqa: E402

from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402

base_url, db, message = sys.argv[1:4]
model = ChatOpenAI(model="scripted", base_url=base_url, api_key="bench", streaming=True)


def agent(state: MessagesState) -> dict:
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect(db, check_same_thread=False)))
config = {"configurable": {"thread_id": uuid.uuid4().hex}}
if GC:
    gc.freeze()
    gc.enable()
print(graph.invoke({"messages": [("user", message)]}, config)["messages"][-1].content)
if GC:
    gc.freeze()
