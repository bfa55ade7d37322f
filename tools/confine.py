"""Confine a process before it runs a command: the layers a plan asks for, in order.

Standard library only and quick to import: tools/supervise.py loads this file by its path
(it runs as ``python -S -I``), and so loads the layers beside it, and each call supervisor
applies a plan to itself right before posix_spawn, so the command and everything it starts
inherit the confinement. Run as a script it is the launcher of MCP stdio servers:

    python -S -I confine.py PLAN_JSON COMMAND [ARG...]

confines itself by PLAN_JSON and execs COMMAND in a session of its own (no controlling
terminal).

A plan (made by tools.sandbox, JSON) says: ``mechanism`` ("landlock" or "bwrap"), ``abi``
(Landlock's), ``mode`` ("read-only" or "workspace-write"), ``workspace``, ``protect_git``
(the workspace is (in) a git repository: its ``.git`` stays read-only), ``protected``
(paths in the workspace that stay read-only: agentcli's data folder, when the workspace
holds it), ``writable`` (extra paths: the private temp folder first), ``network`` (TCP
allowed), ``proxy_port`` (not 0: the egress proxy's port, see below), ``namespaces``
(False: do not try them) and ``bwrap`` (its path).

The layers, each applied when the kernel has it, in this order:

1. namespaces (tools/namespaces.py): a user and mount namespace where everything is
   read-only but the writable set, ``.git`` bound read-only, a minimal
   /dev; a network namespace when the network is off; with a ``proxy_port``, the egress
   proxy's listening socket is bound on 127.0.0.1 in that network namespace, for the
   application to serve (tools/egress_proxy.py), and a plan that has one but gets no
   namespace (or no Landlock) refuses to run;
2. Landlock (tools/landlock.py): the writing rights, TCP (connect to the proxy's port
   alone, when there is one), signals and ptrace; with no
   namespace it is the fallback that keeps ``.git`` read-only on its own;
3. capabilities: root's dangerous ones (tracing, mounting, devices...) leave the bounding
   set, so a command run as root never has them;
4. seccomp (tools/seccomp.py): no TIOCSTI or TIOCLINUX, whatever the terminal.

Where Landlock is missing, bubblewrap makes the namespaces (with a PID namespace and its own
/proc) and the seccomp filter is applied before it starts.
"""

import json
import os
import socket
import sys


def _layer(name: str):  # type: ignore[no-untyped-def]
    """The module tools/NAME.py: from this package, or by path when run as a script."""
    if __package__:
        import importlib

        return importlib.import_module(f"{__package__}.{name}")
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"agentcli_{name}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


landlock = _layer("landlock")
namespaces = _layer("namespaces")
seccomp = _layer("seccomp")


def bwrap_argv(plan: dict, argv: list[str]) -> list[str]:
    """``argv`` under bubblewrap: no capability (root's too), the whole file system
    read-only, a private read-only /dev and /proc, a private /tmp (what of the real one the
    command needs bound back, as namespaces.py does), PID and IPC namespaces, a session of its
    own, the writable paths bound writable (the workspace's
    ``.git``, and the top-level entry leading to each protected path, bound read-only over
    it), the socket folders of tmux, screen and the session empty, no network unless
    allowed."""
    wrapped = [plan["bwrap"], "--die-with-parent", "--new-session", "--unshare-pid"]
    wrapped += ["--unshare-ipc", "--cap-drop", "ALL"]  # run by root, it keeps every one
    wrapped += ["--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm"]
    wrapped += ["--remount-ro", "/dev", "--proc", "/proc", "--remount-ro", "/proc"]
    paths = list(plan["writable"])
    if plan["mode"] == "workspace-write":
        paths.append(plan["workspace"])
    paths = [path for path in dict.fromkeys(paths) if os.path.exists(path)]
    back = namespaces.private_tmp_binds(plan, paths)
    if back is not None:
        wrapped += ["--perms", "1777", "--tmpfs", namespaces.TMP]
        for path in back:
            wrapped += ["--ro-bind", path, path]
    for path in paths:
        wrapped += ["--bind", path, path]
    workspace = plan["workspace"]
    kept = [os.path.join(workspace, ".git")]
    for path in plan.get("protected", []):  # the entry leading to it: its parents stay put
        if namespaces._beneath(path, workspace) and path != workspace:
            kept.append(os.path.join(workspace, os.path.relpath(path, workspace).split("/")[0]))
    for path in dict.fromkeys(kept):
        if plan["mode"] == "workspace-write" and os.path.lexists(path):
            wrapped += ["--ro-bind", path, path]
    uid = os.getuid()
    for folder in namespaces.SOCKET_FOLDERS:
        folder = folder.format(uid=uid)
        hidden = back is not None and namespaces._beneath(folder, namespaces.TMP)
        if os.path.isdir(folder) and not os.path.islink(folder) and not hidden:
            wrapped += ["--tmpfs", folder, "--remount-ro", folder]
    if not plan["network"]:
        wrapped.append("--unshare-net")
    return [*wrapped, "--", *argv]


def confine(
    plan: dict | None, argv: list[str], env: dict[str, str]
) -> tuple[list[str], dict[str, str], list[str], socket.socket | None]:
    """Apply ``plan`` (None: no confinement) to this process: (the argv to run, the
    environment to run it with, the layers now in place, the egress proxy's listening
    socket when the plan has a ``proxy_port``). Under Landlock the argv is the same (this
    process is now confined); under bubblewrap it is bubblewrap's around it.
    OSError when a layer the plan needs cannot be applied: nothing must run then."""
    if plan is None:
        return argv, env, [], None
    listener = None
    if plan["mechanism"] == "landlock":
        view = namespaces.enter(plan) if plan.get("namespaces", True) else None
        if plan.get("proxy_port"):
            listener = _proxy_listener(view, int(plan["proxy_port"]))
        bound = view is not None and view["git_bound"]
        tmp = view is not None and view["private_tmp"]
        landlock.restrict(plan, private_dev=view is not None, git_bound=bound, private_tmp=tmp)
        layers = ["namespaces"] if view else []
        layers.append(f"landlock {plan['abi']}")
    elif plan.get("proxy_port"):
        raise OSError("only Landlock with namespaces confines the network to the egress proxy")
    elif plan["mechanism"] == "bwrap":
        argv, layers = bwrap_argv(plan, argv), ["bubblewrap"]
    else:
        raise OSError(f"unknown confinement {plan['mechanism']!r}")
    if plan["mechanism"] == "landlock" and _drop_capabilities():
        layers.append("capabilities")
    if seccomp.install(plan["network"]):
        layers.append("seccomp")
    if listener is not None:
        layers.append("egress proxy")
    return argv, env, layers, listener


def _proxy_listener(view: dict | None, port: int) -> socket.socket:
    """The egress proxy's listening socket on 127.0.0.1:``port`` in the command's new
    network namespace (bound before Landlock refuses binding): the application accepts on
    it, from outside. Without a namespace of its own the command would share the machine's
    network, where Landlock's port rule cannot tell the proxy from any host on that port,
    nor stop UDP: then nothing runs."""
    if view is None:
        raise OSError(
            "[sandbox] network lists hosts, but this kernel refuses the command a network"
            " namespace of its own (user namespaces are off): nothing would keep it to the"
            " egress proxy. Set network = false, or true to allow all of the network"
        )
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # not inherited (CLOEXEC)
    try:
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
    except OSError:
        listener.close()
        raise
    return listener


# what root keeps from no confined command: tracing and reading other processes (their
# environment, memory and descriptors), mounting, devices, modules, raw I/O and the kernel's
# own settings, opening files by handle (past every path check), and immutable files
DANGEROUS_CAPABILITIES = (
    2,  # DAC_READ_SEARCH: open_by_handle_at
    9,  # LINUX_IMMUTABLE
    12,  # NET_ADMIN
    16,  # SYS_MODULE
    17,  # SYS_RAWIO
    19,  # SYS_PTRACE
    21,  # SYS_ADMIN
    22,  # SYS_BOOT
    25,  # SYS_TIME
    26,  # SYS_TTY_CONFIG
    27,  # MKNOD
    29,  # AUDIT_CONTROL
    32,  # MAC_OVERRIDE
    33,  # MAC_ADMIN
    34,  # SYSLOG
    38,  # PERFMON
    39,  # BPF
    40,  # CHECKPOINT_RESTORE
)
PR_CAPBSET_DROP = 24


def _drop_capabilities() -> bool:
    """Take DANGEROUS_CAPABILITIES out of the bounding set, so a command run as root (or
    as root inside the namespace) never has them; False where this process may not (a
    user's process has none to lose)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    dropped = False
    for capability in DANGEROUS_CAPABILITIES:
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) == 0:
            dropped = True
    return dropped


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: confine.py PLAN_JSON COMMAND [ARG...]")
    try:
        os.setsid()  # no controlling terminal: the person's is out of reach
    except OSError:
        pass  # already a session's leader (its starter made one)
    try:
        argv, env, _, listener = confine(json.loads(sys.argv[1]), sys.argv[2:], dict(os.environ))
        if listener is not None:  # no one here to serve it: a launcher's plan has none
            listener.close()
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        sys.stderr.write(f"agentcli: cannot start {sys.argv[2]!r} confined: {exc}\n")
        os._exit(126)


if __name__ == "__main__":
    main()
