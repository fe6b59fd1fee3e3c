"""Reading input files safely: regular files of bounded size, YAML without bombs or silent overrides.

`yaml.safe_load` alone accepts three inputs that hurt a harness: a duplicate key (the second
`graders:` silently wins), aliases that expand past any sane size ("billion laughs": 1 KB of
text, gigabytes once validated or dumped) and nesting deep enough to overflow Python's stack.
`load_yaml` refuses each with a `yaml.MarkedYAMLError`, so callers that already turn YAML errors
into `file:line` problems report them the same way. `read_text_limited` (from `aeh._util.files`) refuses what is
not a regular file (a symlink to /dev/zero, a FIFO) or is too big, before reading a byte of it.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from aeh._util.files import DEFAULT_MAX_INPUT_BYTES, InputFileError, read_bytes_limited, read_text_limited

__all__ = ["MAX_INPUT_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "InputFileError", "YamlLimitError",
           "load_yaml", "read_bytes_limited", "read_text_limited"]

#: Input files are hand-written: tasks, suites, fault profiles, price tables, label files
#: (the default; `AEH_MAX_INPUT_BYTES` changes it, see `aeh._util.files`).
MAX_INPUT_BYTES = DEFAULT_MAX_INPUT_BYTES
#: Scalars, sequences and mappings after every alias is expanded.
MAX_YAML_NODES = 200_000
#: Nesting levels; real inputs use fewer than ten.
MAX_YAML_DEPTH = 100


class YamlLimitError(yaml.MarkedYAMLError):
    """YAML that parses but is refused: duplicate keys, alias bombs, absurd nesting."""

    def __init__(self, problem: str, node: Node | None = None) -> None:
        super().__init__(problem=problem, problem_mark=node.start_mark if node is not None else None)


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # an unhashable key: the base constructor reports it
                if duplicate:
                    raise YamlLimitError(f"duplicate key {key!r} (the later value would silently "
                                         "replace the earlier one)", key_node)
        return super().construct_mapping(node, deep=deep)


def _check_size(root: Node, max_nodes: int, max_depth: int) -> None:
    """Refuse a node graph whose alias-expanded size or depth is past the caps, or that loops."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise YamlLimitError("an alias refers to the mapping or list that contains it", node)
        if depth > max_depth:
            raise YamlLimitError(f"nested more than {max_depth} levels deep", node)
        open_nodes.add(key)
        total = 1
        if isinstance(node, SequenceNode):
            children: list[Node] = list(node.value)
        elif isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        for child in children:
            total += size(child, depth + 1)
            if total > max_nodes:
                raise YamlLimitError(f"expands to more than {max_nodes} values once aliases are "
                                     "expanded (an alias bomb?)", node)
        open_nodes.discard(key)
        sizes[key] = total
        return total

    size(root, 0)


def load_yaml(text: str, *, max_nodes: int = MAX_YAML_NODES, max_depth: int = MAX_YAML_DEPTH) -> Any:
    """Parse one YAML document like `yaml.safe_load`, refusing duplicate keys, bombs and deep nesting."""
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlLimitError(f"nested too deeply to parse (more than {max_depth} levels)") from None
        if node is None:
            return None
        _check_size(node, max_nodes, max_depth)
        return loader.construct_document(node)
    finally:
        loader.dispose()
