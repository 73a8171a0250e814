"""A larger hostile-input campaign than the test suite's (run once, report the counts):

    .venv/bin/python tests/fuzz/campaign.py [--mutants-per-seed 2000] [--attacks-per-kind 300]

Every seed's mutants (tests/fuzz/harness.py) and every structure-aware attack (attacks.py) go
through the same checks as the tests: our errors only (no other exception, no InternalError), no
hang, every FormatError says where; after each attack and every CROSS_LOAD_EVERY-th mutant a
valid seed is loaded and run again and must give the outputs it gave before (cross-load).
Prints the inputs tried, the outcomes and the unclean ones (which must be 0); unclean inputs are
saved to tests/fuzz/crashers/new_*.bin.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import attacks  # noqa: E402
import harness  # noqa: E402
from test_structured_attacks import RUNNABLE, assert_seed_unharmed  # noqa: E402

HANG_SECONDS = 30
CROSS_LOAD_EVERY = 20


def _try(data: bytes, kind: str, shapes: list[list[int]] | None, label: str, cross_load: str | None,
         outcomes: Counter[str], unclean: list[str]) -> None:
    try:
        error = harness.bounded_failure(data, kind, shapes, False, HANG_SECONDS)
        outcomes["ok" if error is None else type(error).__name__] += 1
        if cross_load is not None:
            assert_seed_unharmed(cross_load)
    except AssertionError as exc:
        path = harness.CRASHERS / f"new_{label.replace('/', '_')}.{kind}.bin"
        path.write_bytes(data)
        unclean.append(f"{label}: {exc}"[:300])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants-per-seed", type=int, default=2000)
    parser.add_argument("--attacks-per-kind", type=int, default=300)
    args = parser.parse_args()
    seeds, shapes = harness.load_seeds(), harness.seed_shapes()
    outcomes: Counter[str] = Counter()
    unclean: list[str] = []
    start = time.monotonic()
    tried = 0
    for name, data in sorted(seeds.items()):
        kind = harness.kind_of(name)
        mutator = harness.Mutator(data, kind)
        for i in range(args.mutants_per_seed):
            cross = RUNNABLE[i % len(RUNNABLE)] if i % CROSS_LOAD_EVERY == 0 else None
            _try(mutator.mutant(1_000_000 + i), kind, shapes.get(name.removesuffix(".bin")), f"{name}/{i}", cross,
                 outcomes, unclean)
            tried += 1
    mutants = tried
    for name, (_, kind) in sorted(attacks.ATTACKS.items()):
        for i in range(args.attacks_per_kind):
            _try(attacks.attack(name, 1_000_000 + i), kind, None, f"{name}/{i}", RUNNABLE[i % len(RUNNABLE)],
                 outcomes, unclean)
            tried += 1
    print(f"inputs tried: {tried} ({mutants} mutants of {len(seeds)} seeds, {tried - mutants} structured attacks "
          f"of {len(attacks.ATTACKS)} kinds) in {time.monotonic() - start:.0f} s")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in outcomes.most_common()))
    print(f"unclean outcomes: {len(unclean)}")
    for line in unclean:
        print("  " + line)
    sys.exit(1 if unclean else 0)


if __name__ == "__main__":
    main()
