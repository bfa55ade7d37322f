"""A seccomp filter for confined commands: what neither Landlock nor a mount namespace covers.

Standard library only, loaded by path from tools/confine.py when that runs as a script.
The filter refuses (EPERM), for the process and everything it starts:

- ``ioctl(fd, TIOCSTI)``: pushing characters into a terminal's input as if typed there
  (root may do it on any terminal; so may anyone where ``dev.tty.legacy_tiocsti`` is 1);
- ``ioctl(fd, TIOCLINUX)``: the Linux console's selection and paste, the same class;
- every x32 system call (the x32 ABI numbers ioctl apart from x86-64's), and, on an
  architecture whose numbers this file does not know, the filter is not installed and
  ``install`` says so (False): the caller reports the layer as missing.

A 32-bit process on a 64-bit kernel (i386 on x86-64, arm on aarch64) enters through its own
table: its ioctl number is checked too. The ioctl request is an ``unsigned int`` to the
kernel, so only the low 32 bits of the argument are compared, as the kernel reads them.
"""

import ctypes
import os
import struct

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
REFUSED = (TIOCSTI, TIOCLINUX)

# BPF: ld w abs, jeq k, jge k, ret k
LD_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
NR, ARCH, ARG1_LOW = 0, 4, 24  # offsets in struct seccomp_data (little-endian)
X32_BIT = 0x40000000

AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 = 0xC000003E, 0x40000003
AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM = 0xC00000B7, 0x40000028
# the ioctl number of each architecture a kernel of this machine's kind runs programs of
IOCTL = {
    "x86_64": {AUDIT_ARCH_X86_64: 16, AUDIT_ARCH_I386: 54},
    "aarch64": {AUDIT_ARCH_AARCH64: 29, AUDIT_ARCH_ARM: 54},
}

_libc = ctypes.CDLL(None, use_errno=True)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def program(machine: str) -> bytes | None:
    """The filter for ``machine`` (``uname -m``), None when unknown here."""
    tables = IOCTL.get(machine)
    if tables is None:
        return None
    denied = ERRNO | 1  # EPERM
    ops = [_op(LD_ABS, ARCH)]
    for arch, ioctl in tables.items():
        check = [_op(LD_ABS, NR)]
        if arch == AUDIT_ARCH_X86_64:
            check += [_op(JGE, X32_BIT, 0, 1), _op(RET, denied)]
        check += [_op(JEQ, ioctl, 1, 0), _op(RET, ALLOW), _op(LD_ABS, ARG1_LOW)]
        for request in REFUSED:
            check += [_op(JEQ, request, 0, 1), _op(RET, denied)]
        check.append(_op(RET, ALLOW))
        ops += [_op(JEQ, arch, 0, len(check)), *check]
    ops.append(_op(RET, ALLOW))  # an architecture this kernel cannot run here
    return b"".join(ops)


def install() -> bool:
    """Filter this process and all it starts from now on; False when this architecture is
    not known here (nothing installed), OSError when the kernel refuses."""
    code = program(os.uname().machine)
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
