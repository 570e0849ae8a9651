"""Which of our packages each package imports, read from the source (top-level and function-level
imports alike), as a Markdown table; exit 1 if two packages import each other, directly or around
a longer cycle. ``docs/layers.md`` is its output:

    python scripts/import_graph.py > docs/layers.md

Packages: ``native``, ``protocol``, ``models`` and each subpackage of ``agent``. The rules the
layers must follow are the import-linter contracts in ``pyproject.toml`` (``lint-imports``,
run by ``tests/test_layers.py``); this listing shows what the code does.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = ("agent", "protocol", "native", "models")
NAMES: dict[str, list[str]] = {}  # package -> its modules, filled by graph()


def package_of(module: str) -> str | None:
    """``agent.solver.cfr`` -> ``agent.solver``; ``native.cards`` -> ``native``; else None."""
    parts = module.split(".")
    if parts[0] not in TOP:
        return None
    if parts[0] == "agent" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(path: Path, module: str) -> set[str]:
    """Every module named by an import statement anywhere in the file (``from a.b import c``:
    ``a.b.c`` when that is a module of ours, else ``a.b``)."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{alias.name}" for alias in node.names)
    return out


def has_code(path: Path) -> bool:
    """More than a docstring (an ``__init__.py`` that defines something counts as a module)."""
    body = ast.parse(path.read_text()).body
    return any(not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in body)


def graph() -> tuple[dict[str, int], dict[str, set[str]]]:
    counts: dict[str, int] = {}
    NAMES.clear()
    edges: dict[str, set[str]] = {}
    for top in TOP:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = module_name(path)
            package = package_of(module)
            if package is None or package == "agent" or "__pycache__" in path.parts:
                continue  # agent itself only holds the layers
            counts[package] = counts.get(package, 0) + (path.name != "__init__.py" or has_code(path))
            if path.name != "__init__.py" or has_code(path):
                NAMES.setdefault(package, []).append(
                    path.relative_to(ROOT.joinpath(*package.split("."))).with_suffix("").as_posix()
                )
            deps = edges.setdefault(package, set())
            for target in imported_modules(path, module):
                other = package_of(target)
                if other is not None and other != package and other != "agent":
                    deps.add(other)
    return counts, edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def depth(package: str, edges: dict[str, set[str]], seen: tuple[str, ...] = ()) -> int:
    """Longest chain of imports below ``package`` (the table lists the top layer first)."""
    below = [d for d in edges.get(package, ()) if d not in seen]
    return 1 + max((depth(d, edges, seen + (package,)) for d in below), default=0)


def main() -> int:
    counts, edges = graph()
    print("# Packages and what they import\n")
    print("Generated by `python scripts/import_graph.py > docs/layers.md` from the source (every import")
    print("statement, at module top or inside a function). The rules are the import-linter contracts in")
    print("`pyproject.toml`, checked by `lint-imports` in `tests/test_layers.py`: inside `agent`,")
    print("cli > evaluation | training > bots > resolving | blueprint > leaves > nets > solver > common; `protocol`")
    print("never imports `agent`; `native` imports nothing of ours.\n")
    print("| package | modules | imports (our packages) |")
    print("|---|---:|---|")
    order = sorted(counts, key=lambda p: (-depth(p, edges), p))
    for package in order:
        deps = ", ".join(f"`{d}`" for d in sorted(edges.get(package, ()), key=lambda d: (-depth(d, edges), d))) or "—"
        print(f"| `{package}` | {counts[package]} | {deps} |")
    print("\n## Modules\n")
    for package in order:
        print(f"- `{package}`: {', '.join(NAMES.get(package, []))}")
    found = cycles(edges)
    if found:
        for component in found:
            print(f"\nCYCLE between packages: {' <-> '.join(component)}", file=sys.stderr)
        return 1
    print("\nNo cycles between packages.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
