"""POSIX-style path helpers for the static file server.

These work on strings only; they never touch the file system, so symlinks
are not resolved.

``normalize(path)`` removes empty segments (``a//b``), ``.`` segments and
a trailing slash, and resolves ``..`` against the segment before it. In an
absolute path ``..`` at the root stays at the root (``/../a`` -> ``/a``);
in a relative path leading ``..`` segments that cannot be resolved are kept
(``a/../../b`` -> ``../b``). An empty result is ``.`` for relative paths
and ``/`` for absolute ones.

``safe_join(root, requested)`` joins a client-supplied relative path onto
the absolute directory ``root`` and returns the normalized result, which
must be ``root`` itself or lie inside it; otherwise ``PathEscapeError`` is
raised. Absolute ``requested`` paths are refused the same way.
"""

from __future__ import annotations


class PathEscapeError(ValueError):
    """The requested path would leave the served root."""


def normalize(path: str) -> str:
    absolute = path.startswith("/")
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            continue
        parts.append(segment)
    body = "/".join(parts)
    if absolute:
        return "/" + body
    return body or "."


def safe_join(root: str, requested: str) -> str:
    if not root.startswith("/"):
        raise ValueError(f"root must be absolute: {root!r}")
    if requested.startswith("/"):
        raise PathEscapeError(f"absolute path not allowed: {requested!r}")
    root = normalize(root)
    joined = normalize(root + "/" + requested)
    if not joined.startswith(root):
        raise PathEscapeError(f"{requested!r} escapes {root!r}")
    return joined


def split_extension(path: str) -> tuple[str, str]:
    """``"dir/archive.tar.gz"`` -> ``("dir/archive.tar", ".gz")``; a leading
    dot of a file name is not an extension (``".bashrc"`` -> ``(".bashrc", "")``)."""
    head, _, name = path.rpartition("/")
    dot = name.rfind(".")
    if dot <= 0:
        return path, ""
    prefix = f"{head}/" if head or path.startswith("/") else ""
    return prefix + name[:dot], name[dot:]
