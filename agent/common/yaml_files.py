"""YAML files the product reads (``config.yaml``, ``spots.yaml``): PyYAML's safe loader, refusing a
key given twice in one mapping.

``yaml.safe_load`` keeps the last of two equal keys without a word, so an edit that adds a setting
already set further down is silently overridden. Here, in the lowest layer of ``agent``, so every
layer that reads a YAML file can use it.
"""

from __future__ import annotations

from typing import Any

import yaml

_MERGE_TAG = "tag:yaml.org,2002:merge"


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises a ``yaml.constructor.ConstructorError`` marked at the
    second of two equal keys of a mapping (``<<`` merges keep their override rule)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """As ``SafeLoader``'s, but a key seen twice in one mapping is an error naming both lines."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Mark] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)  # cached: the base class gets the same object
                try:
                    first = seen.setdefault(key, key_node.start_mark)
                except TypeError:  # an unhashable key: the base class says so
                    continue
                if first is not key_node.start_mark:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (first on line {first.line + 1})", key_node.start_mark
                    )
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``text`` parsed as YAML by :class:`UniqueKeyLoader`."""
    return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 -- a SafeLoader subclass
