"""Reports of nodes the compiler cannot compile, in the demo backend's wording::

    The node of aten::mul is not supported in this compiler. Source code:
      File "model.py", line 3
        def forward(self, x, h):
            return x * h
                   ~~~~~ <--- HERE
    Module hierarchy: top(M)

A report is written when the node is met but only raised if its poison reaches an output
(or it is ``forced``: reached unconditionally and effectful), so dead nodes stay silent.
"""

from __future__ import annotations

from collections.abc import Iterable

from liteexport.compiler.values import NodeSite, Poison

NO_SOURCE = "  (no source range recorded)"


def format_report(site: NodeSite, reason: str = "") -> str:
    """The text of one report; ``reason`` goes in parentheses after "compiler"."""
    why = f" ({reason})" if reason else ""
    snippet = site.frames[-1].snippet if site.frames else NO_SOURCE
    return (f"The node of {site.kind} is not supported in this compiler{why}. Source code:\n"
            f"{snippet}\nModule hierarchy: {site.hierarchy}")


class ReportLog:
    """Every report written while compiling one module, numbered in the order met."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.forced: set[int] = set()

    def add(self, site: NodeSite, reason: str = "", *, forced: bool = False) -> int:
        self.texts.append(format_report(site, reason))
        index = len(self.texts) - 1
        if forced:
            self.forced.add(index)
        return index

    def force(self, indexes: Iterable[int]) -> None:
        """Reports that stay live whatever happens to their poison (a lost side effect)."""
        self.forced.update(indexes)

    def poison(self, site: NodeSite, reason: str = "") -> Poison:
        return Poison(frozenset({self.add(site, reason)}))

    def live_reports(self, used: Iterable[int]) -> list[str]:
        """The texts of the reports in ``used`` and the forced ones, in the order met,
        without repeats (one node reached twice along the same path reads the same)."""
        chosen = sorted(set(used) | self.forced)
        seen: dict[str, None] = {}
        for index in chosen:
            seen.setdefault(self.texts[index], None)
        return list(seen)
