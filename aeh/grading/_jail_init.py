"""The inside of the `unshare` jail: set up the mounts, give up the privileges, exec the command.

`_jail.Jail.wrap` starts this file (standard library only, run with `python -I`) under
`unshare --user --map-root-user --mount --pid --fork --kill-child --mount-proc`: it is PID 1 of
a PID namespace of its own, root of a user namespace of its own, in a mount namespace of its own
with a fresh /proc. Given a JSON plan and the command after `--`, it

1. opens every folder it will bind back (the interpreter, the start folder, the writable and
   read-only ones) before anything is covered;
2. remounts every mount read-only (except /proc, /sys and /dev), keeping the flags the kernel
   locked on them;
3. mounts an empty tmpfs over the temp dirs, binds the interpreter's folders and the start
   folder back read-only, mounts an empty tmpfs over each `hidden` folder, binds the `writable`
   folders read-write and the `read_only` ones read-only;
4. enters a second user and mount namespace owned by the first (the mounts it inherits are
   locked: no process inside can unmount or remount them to see what they cover), mapped to the
   caller's own user id, so the command starts without capabilities;
5. execs the command in `cwd`.

Any failure ends it with exit 125 and one line on stderr naming the step: the jail is never
half set up and then run.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
#: statvfs's f_flag bits equal the mount flags they report.
_KEPT = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
#: Kernel file systems left as they are (/dev/null must stay writable).
_LEFT = ("/proc", "/sys", "/dev")
EXIT_SETUP = 125

_libc = ctypes.CDLL(None, use_errno=True)


class JailSetupError(Exception):
    pass


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    args = [None if v is None else v.encode() for v in (source, target, fstype)]
    if _libc.mount(args[0], args[1], args[2], ctypes.c_ulong(flags), None if data is None else data.encode()) != 0:
        err = ctypes.get_errno()
        raise JailSetupError(f"mount {target}: {os.strerror(err)}")


def _remount(target: str, readonly: bool) -> None:
    """Bind-remount `target` read-only (or read-write), keeping its locked flags."""
    flags = os.statvfs(target).f_flag & _KEPT
    base = MS_REMOUNT | MS_BIND | flags | (MS_RDONLY if readonly else 0)
    try:
        _mount(None, target, None, base)
    except JailSetupError:
        if flags & (MS_NOATIME | MS_RELATIME):
            raise
        _mount(None, target, None, base | MS_STRICTATIME)  # the one atime mode statvfs does not report


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            raw = line.split()[4]
            points.append(raw.encode("latin-1", "surrogateescape").decode("unicode_escape"))
    return sorted(set(points), key=lambda p: p.count("/"))


def _left_alone(path: str) -> bool:
    return any(path == top or path.startswith(top + "/") for top in _LEFT)


def _read_only_everything() -> None:
    for point in _mount_points():
        if _left_alone(point) or not os.path.isdir(point):
            continue
        try:
            _remount(point, readonly=True)
        except (JailSetupError, OSError):
            if point == "/":
                raise
            # A mount covered by another (only its path is listed) or gone: what covers it is done.


def _bind(fd: int, target: str, readonly: bool) -> None:
    os.makedirs(target, exist_ok=True)
    _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    _remount(target, readonly)


def _tmpfs(target: str) -> None:
    if os.path.isdir(target):
        _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


def _drop_privileges(uid: int, gid: int) -> None:
    """A nested user + mount namespace: what was mounted above is locked, the ids are the caller's."""
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise JailSetupError(f"unshare: {os.strerror(ctypes.get_errno())}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} 0 1\n"), ("gid_map", f"{gid} 0 1\n")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as fh:
            fh.write(text)


def setup(plan: dict[str, object]) -> None:
    def paths(key: str) -> list[str]:
        value = plan.get(key) or []
        assert isinstance(value, list)
        return [str(p) for p in value]

    opened = {key: [(p, os.open(p, os.O_PATH | os.O_DIRECTORY)) for p in paths(key) if os.path.isdir(p)]
              for key in ("runtime", "writable", "read_only")}
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _read_only_everything()
    for path in paths("temp"):
        _tmpfs(path)
    for path, fd in opened["runtime"]:
        _bind(fd, path, readonly=True)
    for path in paths("hidden"):
        _tmpfs(path)
    for path, fd in opened["writable"]:
        _bind(fd, path, readonly=False)
    for path, fd in opened["read_only"]:
        _bind(fd, path, readonly=True)
    for fds in opened.values():
        for _, fd in fds:
            os.close(fd)
    uid, gid = plan.get("uid"), plan.get("gid")
    assert isinstance(uid, int) and isinstance(gid, int)
    _drop_privileges(uid, gid)
    os.chdir(str(plan["cwd"]))


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("aeh jail: usage: _jail_init.py PLAN_JSON -- COMMAND...", file=sys.stderr)
        return EXIT_SETUP
    try:
        setup(json.loads(argv[0]))
    except (JailSetupError, OSError, ValueError, KeyError, AssertionError) as exc:
        print(f"aeh jail: setting up the unshare jail failed: {exc}", file=sys.stderr)
        return EXIT_SETUP
    command = argv[2:]
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"aeh jail: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    return EXIT_SETUP  # not reached: execvp returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
