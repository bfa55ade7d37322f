"""A seccomp filter for confined commands: what neither Landlock nor a mount namespace covers.

Standard library only, loaded by path from tools/confine.py when that runs as a script.
The filter, for the process and everything it starts, refuses:

- ``ioctl(fd, TIOCSTI)`` and ``ioctl(fd, TIOCLINUX)``: typing into a terminal (root may
  do it on any terminal; anyone may where ``dev.tty.legacy_tiocsti`` is 1), or pasting on
  the Linux console (EPERM);
- a setuid or setgid bit, by chmod, fchmod, fchmodat(2) or a file created by open, openat
  or creat with one (EPERM): a command run as root could leave a program that makes any
  user root;
- every extended attribute write (setxattr and its kin: a ``security.capability`` is a
  setuid bit by another name) (EPERM);
- the kernel's keyrings (keyctl, add_key, request_key: the user's keys are no command's)
  (EPERM);
- io_uring (its operations pass no seccomp filter) and openat2 (its mode is out of reach),
  as not there (ENOSYS: programs use the plain calls instead);
- with the network off, ``socket(AF_UNIX, ...)`` (EACCES): a local daemon's socket (a
  tmux server's, the session bus, Docker's) is a way out that no file right covers;
- every system call of another ABI than the machine's own (x32, and 32-bit programs on a
  64-bit kernel), whose numbers differ: they are refused whole (ENOSYS) rather than
  filtered by the wrong table.

On an architecture this file has no table for, nothing is installed and ``install`` says
so (False): the caller reports the layer as missing. Requests and modes are compared on the
low 32 bits of their argument, as the kernel reads them (an ``unsigned int``, a ``mode_t``).
"""

import ctypes
import os
import struct

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
SETID_BITS = 0o6000  # S_ISUID | S_ISGID
AF_UNIX = 1
EPERM, EACCES, ENOSYS = 1, 13, 38

# BPF: ld w abs, jeq k, jset k, ret k
LD_ABS, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
NR, ARCH = 0, 4


def _arg(index: int) -> int:
    """The offset of argument ``index``'s low 32 bits in struct seccomp_data (LE)."""
    return 16 + 8 * index


# per machine: its audit arch, and each call's number
TABLES = {
    "x86_64": (
        0xC000003E,
        {
            "ioctl": 16, "open": 2, "creat": 85, "openat": 257, "openat2": 437,
            "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
            "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "setxattrat": 463,
            "keyctl": 250, "add_key": 248, "request_key": 249,
            "io_uring_setup": 425, "socket": 41,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "ioctl": 29, "openat": 56, "openat2": 437,
            "fchmod": 52, "fchmodat": 53, "fchmodat2": 452,
            "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "setxattrat": 463,
            "keyctl": 219, "add_key": 217, "request_key": 218,
            "io_uring_setup": 425, "socket": 198,
        },
    ),
}  # fmt: skip
X32_BIT = 0x40000000  # x86-64's x32 ABI: its numbers have this bit
# call: (the argument holding the mode, or None: refused whenever it is made)
MODE_ARGUMENT = {
    "chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2, "open": 2, "creat": 1, "openat": 3,
}  # fmt: skip
REFUSED = {
    "setxattr": EPERM, "lsetxattr": EPERM, "fsetxattr": EPERM, "setxattrat": EPERM,
    "keyctl": EPERM, "add_key": EPERM, "request_key": EPERM,
    "io_uring_setup": ENOSYS, "openat2": ENOSYS,
}  # fmt: skip

_libc = ctypes.CDLL(None, use_errno=True)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _denied(errno: int) -> bytes:
    return _op(RET, ERRNO | errno)


def _check(number: int, body: list[bytes]) -> list[bytes]:
    """If the call is ``number``: ``body`` (which ends in a return); else on to the next."""
    return [_op(LD_ABS, NR), _op(JEQ, number, 0, len(body)), *body]


def program(machine: str, network: bool) -> bytes | None:
    """The filter for ``machine`` (``uname -m``), None when there is no table for it."""
    if machine not in TABLES:
        return None
    arch, numbers = TABLES[machine]
    ops = [_op(LD_ABS, ARCH), _op(JEQ, arch, 1, 0), _denied(ENOSYS)]
    if machine == "x86_64":
        ops += [_op(LD_ABS, NR), _op(JSET, X32_BIT, 0, 1), _denied(ENOSYS)]
    ioctl = [_op(LD_ABS, _arg(1))]
    for request in (TIOCSTI, TIOCLINUX):
        ioctl += [_op(JEQ, request, 0, 1), _denied(EPERM)]
    ops += _check(numbers["ioctl"], [*ioctl, _op(RET, ALLOW)])
    for call, index in MODE_ARGUMENT.items():
        if call in numbers:
            body = [_op(LD_ABS, _arg(index)), _op(JSET, SETID_BITS, 0, 1), _denied(EPERM)]
            ops += _check(numbers[call], [*body, _op(RET, ALLOW)])
    for call, errno in REFUSED.items():
        ops += _check(numbers[call], [_denied(errno)])
    if not network:
        body = [_op(LD_ABS, _arg(0)), _op(JEQ, AF_UNIX, 0, 1), _denied(EACCES)]
        ops += _check(numbers["socket"], [*body, _op(RET, ALLOW)])
    ops.append(_op(RET, ALLOW))
    return b"".join(ops)


def install(network: bool) -> bool:
    """Filter this process and all it starts from now on; False when this architecture is
    not known here (nothing installed), OSError when the kernel refuses."""
    code = program(os.uname().machine, network)
    if code is None:
        return False
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot set no_new_privs")
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"cannot install the seccomp filter: {os.strerror(errno)}")
    return True
