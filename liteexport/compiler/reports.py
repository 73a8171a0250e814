"""Reports of nodes the compiler cannot compile, in the demo backend's wording::

    The node of aten::mul is not supported in this compiler. Source code:   File "model.py", line 3
        def forward(self, x, h):
            return x * h
                   ~~~~~ <--- HERE
    Module hierarchy: top(M)

The first line is torch's demo backend's, byte for byte ("Source code: " then the range as
``SourceRange::str()`` prints it), so torch's own test patterns match; the hierarchy follows.
A report is written when the node is met but only raised if its poison reaches an output
(or it is ``forced``: reached unconditionally and effectful), so dead nodes stay silent.
Every live report is raised at once, grouped by node kind (most frequent first, with a
count per kind); sites that share a source line and reason (the same layer class used
35 times) are one paragraph listing each module hierarchy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from liteexport.compiler.values import NodeSite, Poison
from liteexport.errors import UnsupportedNodesError

NO_SOURCE = "  (no source range recorded)"


@dataclass(frozen=True)
class Report:
    site: NodeSite
    reason: str

    @property
    def snippet(self) -> str:
        return self.site.frames[-1].snippet if self.site.frames else NO_SOURCE


def format_report(site: NodeSite, reason: str = "", hierarchies: Iterable[str] = ()) -> str:
    """The text of one report; ``reason`` goes in parentheses after "compiler".
    ``hierarchies``: the module hierarchies of every site sharing this source and reason
    (default: the site's own)."""
    why = f" ({reason})" if reason else ""
    snippet = Report(site, reason).snippet
    where = "\n".join(f"Module hierarchy: {h}" for h in (list(hierarchies) or [site.hierarchy]))
    return (f"The node of {site.kind} is not supported in this compiler{why}. Source code: "
            f"{snippet}\n{where}")


class ReportLog:
    """Every report written while compiling one module, numbered in the order met."""

    def __init__(self) -> None:
        self.reports: list[Report] = []
        self.forced: set[int] = set()

    def add(self, site: NodeSite, reason: str = "", *, forced: bool = False) -> int:
        self.reports.append(Report(site, reason))
        index = len(self.reports) - 1
        if forced:
            self.forced.add(index)
        return index

    def force(self, indexes: Iterable[int]) -> None:
        """Reports that stay live whatever happens to their poison (a lost side effect)."""
        self.forced.update(indexes)

    def poison(self, site: NodeSite, reason: str = "") -> Poison:
        return Poison(frozenset({self.add(site, reason)}))

    def live(self, used: Iterable[int]) -> list[Report]:
        """The reports in ``used`` and the forced ones, in the order met, without repeats
        (one node reached twice along the same path reads the same)."""
        seen: dict[tuple[str, str, str, str], Report] = {}
        for index in sorted(set(used) | self.forced):
            report = self.reports[index]
            seen.setdefault((report.site.kind, report.reason, report.snippet, report.site.hierarchy), report)
        return list(seen.values())


def blockers(reports: Iterable[Report]) -> dict[str, int]:
    """Sites per node kind, most frequent first (ties: in the order met)."""
    counts: dict[str, int] = {}
    for report in reports:
        counts[report.site.kind] = counts.get(report.site.kind, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def unsupported_error(reports: list[Report], what_to_try: str = "") -> UnsupportedNodesError:
    """One error for every live report: a summary (kinds and counts, then ``what_to_try``, by
    default the TorchScript front end's ways out), then per kind the paragraphs of its sites."""
    counts = blockers(reports)
    groups: dict[tuple[str, str, str], list[Report]] = {}
    for kind in counts:
        for report in reports:
            if report.site.kind == kind:
                groups.setdefault((kind, report.reason, report.snippet), []).append(report)
    texts = [format_report(group[0].site, group[0].reason, [r.site.hierarchy for r in group])
             for group in groups.values()]
    sites = sum(counts.values())
    width = max(len(kind) for kind in counts)
    summary = "\n".join([f"{sites} unsupported node{'s' * (sites != 1)} of {len(counts)} "
                         f"kind{'s' * (len(counts) != 1)}:"]
                        + [f"  {kind:<{width}}  {n} site{'s' * (n != 1)}" for kind, n in counts.items()]
                        + [what_to_try or WHAT_TO_TRY])
    reasons = {kind: next(r.reason for r in reports if r.site.kind == kind) for kind in counts}
    return UnsupportedNodesError(texts, summary=summary, counts=counts, reasons=reasons)


# said once, under the counts, so a user need not scroll through every site to learn the ways out
WHAT_TO_TRY = ("What to try: --lower auto compiles the submodules that can be and keeps the rest as TorchScript "
               "bytecode (runtime_py and torch's lite interpreter run it; the native core does not); "
               "--specialize ARG=VALUE fixes a non-Tensor argument; or rewrite the lines below with supported "
               "ops (README, \"Limitations\").")
# the torch.export front end's: its graphs have no submodules to keep apart, nor non-Tensor arguments
EXPORT_WHAT_TO_TRY = ("What to try: rewrite the lines below with supported ops (README, \"Limitations\"), or export "
                      "with --frontend torchscript --lower auto, which compiles the submodules that can be and keeps "
                      "the rest as TorchScript bytecode (runtime_py and torch's lite interpreter run it; the native "
                      "core does not).")
