"""YAML files the product reads (``config.yaml``, ``spots.yaml``): PyYAML's safe loader, refusing a
key given twice in one mapping, and reading numbers as they look (``1e3`` a float; ``017`` and
``1:30`` strings, not octal or base 60), and a plain key as its text (a spot named ``1e3`` is ``'1e3'``).

``yaml.safe_load`` keeps the last of two equal keys without a word, so an edit that adds a setting
already set further down is silently overridden. Here, in the lowest layer of ``agent``, so every
layer that reads a YAML file can use it.
"""

from __future__ import annotations

import re
import reprlib
from typing import Any

import yaml

_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_STR_TAG = "tag:yaml.org,2002:str"
#: what a plain (unquoted) key may have been resolved to that it is read back as text from
_PLAIN_KEY_TAGS = frozenset(
    {_INT_TAG, _FLOAT_TAG, "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:timestamp"}
)
# YAML 1.1 (PyYAML) reads ``1e3`` as a string (a float needs a dot), ``1:30`` as 90 (base 60) and
# ``017`` as 15 (octal): a setting written so was refused as "not a number", or silently taken as
# another number. Here a number is what it looks like to a person: an exponent without a dot is a
# float (as in YAML 1.2); an integer is decimal without a leading zero, or hexadecimal; base 60,
# octal and binary are strings, which a number's setting refuses by name (so is an integer of more
# than 100 digits, which int() would refuse past 4300 with an error naming no line). Underscores
# between digits stay allowed, as in YAML 1.1.
_INT = re.compile(r"^(?:[-+]?(?:0|[1-9][0-9_]{0,99})|[-+]?0x[0-9a-fA-F][0-9a-fA-F_]{0,99})$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"
    r"|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))$"
)


def _as_text(key: yaml.Node) -> yaml.Node:
    """A plain scalar key as a string node: a new node, so that an alias of it elsewhere (``&a 10: x``,
    then ``y: *a``) keeps its own type. A key tagged by its writer (``!!int 5:``) keeps its tag."""
    if (
        isinstance(key, yaml.ScalarNode)
        and key.style is None
        and key.tag in _PLAIN_KEY_TAGS
        and not getattr(key, "tagged", False)
    ):
        return yaml.ScalarNode(_STR_TAG, key.value, key.start_mark, key.end_mark, key.style)
    return key


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises a ``yaml.constructor.ConstructorError`` marked at the
    second of two equal keys of a mapping (``<<`` merges keep their override rule)."""

    def compose_scalar_node(self, anchor: str | None) -> yaml.ScalarNode:
        """As ``SafeLoader``'s, marking a node whose tag was written (``!!int 5``): the node alone cannot tell
        ``!!int 5`` from a plain ``5`` resolved to the same tag, and only the plain one is read as text as a key."""
        event = self.peek_event()
        node = super().compose_scalar_node(anchor)
        node.tagged = event.tag not in (None, "!")
        return node

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """As ``SafeLoader``'s: the ``<<`` merges' pairs put first, a key of an earlier mapping winning over the
        same key of a later one, the mapping's own keys over all; but merged keys are told apart as the mapping
        reads them (tag and text), where PyYAML told them apart by the identity of their text: ``<<: [{a: 1},
        {a: 2}]`` gave 1 and ``<<: [{ab: 1}, {ab: 2}]`` 2, and ``!!int 5`` dropped a plain ``5`` merged after it."""
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        seen: set[Any] = set()
        own = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                if key_node.tag == "tag:yaml.org,2002:value":  # the ``=`` key, as PyYAML reads it
                    key_node.tag = _STR_TAG
                own.append((key_node, value_node))
                continue
            if isinstance(value_node, yaml.SequenceNode):
                sources = value_node.value
            elif isinstance(value_node, yaml.MappingNode):
                sources = [value_node]
            else:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"expected a mapping or list of mappings for merging, but found {value_node.id}",
                    value_node.start_mark,
                )
            for source in sources:
                if not isinstance(source, yaml.MappingNode):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"expected a mapping for merging, but found {source.id}",
                        source.start_mark,
                    )
                self.flatten_mapping(source)
                for key, value in source.value:
                    key = _as_text(key)
                    ident = (key.tag, key.value) if isinstance(key, yaml.ScalarNode) else id(key)
                    if ident not in seen:
                        seen.add(ident)
                        merged.append((key, value))
        node.value = merged + own

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """As ``SafeLoader``'s, but a key seen twice in one mapping is an error naming both lines, and a
        plain key is the text as written (a spot named ``1e3`` stays ``'1e3'``, not the float 1000.0
        that ``--spot 1e3`` would never find; ``on:`` stays ``'on'``, not True)."""
        if isinstance(node, yaml.MappingNode):
            node.value = [(_as_text(key), value) for key, value in node.value]
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
        return super().construct_mapping(node, deep=deep)  # merges by flatten_mapping, keys merged in as text too


UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT_TAG, _FLOAT_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
UniqueKeyLoader.add_implicit_resolver(_INT_TAG, _INT, list("-+0123456789"))
UniqueKeyLoader.add_implicit_resolver(_FLOAT_TAG, _FLOAT, list("-+0123456789."))


def load_yaml(text: str) -> Any:
    """``text`` parsed as YAML by :class:`UniqueKeyLoader`."""
    return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 -- a SafeLoader subclass


_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 80
_SHOWN.maxlong = 40
_SHOWN.maxlist = _SHOWN.maxdict = _SHOWN.maxtuple = 8


def shown(value: Any) -> str:
    """``repr(value)`` cut to about 80 characters: what an error message echoes of a value read from
    a file (a 200,000-character setting made a 200 KB error line)."""
    return _SHOWN.repr(value)
