"""Every relative link in the repository's markdown (README, docs/, models/) leads somewhere: the
file exists and, for ``page.md#heading``, the page has that heading. Results pages are edited
often and their headings carry hand counts, so a renamed heading would otherwise break links
silently."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p for p in ROOT.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))
FENCE = re.compile(r"^```.*?^```", flags=re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text()), flags=re.M):
        slug = heading_slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")  # a repeated heading gets -1, -2, ...
    return found


def test_heading_slugs_follow_github() -> None:
    assert heading_slug("`c/c/56/56`, 1000 hands (the current bot)") == "cc5656-1000-hands-the-current-bot"
    assert heading_slug("Leduc: exact exploitability") == "leduc-exact-exploitability"
    assert heading_slug("Over-folding after the bot's own action") == "over-folding-after-the-bots-own-action"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for link in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        path, _, fragment = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif fragment and target.suffix == ".md" and fragment not in anchors(target):
            broken.append(f"{link}: no heading with that anchor in {target.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)
