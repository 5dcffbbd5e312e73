"""The rule's test measured where no difference exists: the false-call rate of the two-sided paired t-test at 5 %
against the former rule's (the mean beyond its std), simulated per noise and number of pairs; or a page's
difference, mean ± std over n pairs, judged by the rule.

    python -m inr.experiments.false_calls                                 # the table of docs/results.md
    python -m inr.experiments.false_calls --judge 0.43 0.85 3             # a page's mean ± std over n pairs
    python -m inr.experiments.false_calls --judge 1.75 0.58 24 --signals 8   # 8 images × 3 seeds against a seedless row
    python -m inr.experiments.false_calls --judge 0.28 0.26 24 --machine 0.73

The simulation draws ``--trials`` comparisons of n paired differences from each noise of ``stats.NOISES`` (normal,
heavy-tailed) and ``stats.SKEWED`` with no true difference, and counts how many each rule calls
(``stats.false_call_rate``); the last column is the smallest p the exact sign-flip test can reach over n pairs.
"""

from __future__ import annotations

from typing import Optional

from inr.experiments.stats import LEVEL, PAIRS, judge, rates_table
from inr.run.command import ExperimentParser


def main(argv: Optional[list[str]] = None) -> None:
    """``python -m inr.experiments.false_calls``: the table of simulated false-call rates, or ``--judge``."""
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--trials", type=int, default=200_000, help="simulated comparisons per noise and number of pairs")
    parser.add_argument("--seed", type=int, default=0, help="the simulation's random seed")
    parser.add_argument(
        "--pairs", type=str, default=",".join(map(str, PAIRS)), help="comma-separated numbers of pairs (each ≥ 2)"
    )
    parser.add_argument(
        "--judge", type=float, nargs=3, metavar=("MEAN", "STD", "N"), default=None, help="judge a mean ± std over N pairs"
    )
    parser.add_argument("--machine", type=float, default=None, help="with --judge: the machine spread where measured")
    parser.add_argument("--digits", type=int, default=2, help="with --judge: decimals of the figures (3 for IoU)")
    parser.add_argument(
        "--signals",
        type=int,
        default=None,
        help="with --judge: the N pairs are seeds of this many signals against a seedless row (one pair per signal)",
    )
    args = parser.parse_args(argv)
    if args.judge is not None:
        mean, std, n = args.judge
        if not float(n).is_integer() or n < 1 or std < 0:
            parser.error(f"--judge {mean:g} {std:g} {n:g}: N must be a whole number ≥ 1 and STD ≥ 0")
        if args.signals is not None and not 1 <= args.signals <= n:
            parser.error(f"--signals {args.signals}: between 1 and N ({n:g})")
        try:
            print(judge(mean, std, int(n), args.machine, args.signals, args.digits))
        except ValueError as exc:
            parser.error(f"--signals: {exc}")
        return
    try:
        pairs = tuple(int(x) for x in args.pairs.split(",") if x.strip())
    except ValueError:
        parser.error(f"--pairs {args.pairs!r}: comma-separated whole numbers")
    if not pairs or min(pairs) < 2 or args.trials < 1:
        parser.error("--pairs: each at least 2; --trials: at least 1")
    print(f"False-call rates over {args.trials:,} simulated comparisons each (seed {args.seed}), two-sided, level {LEVEL:g}:\n")
    print(rates_table(args.trials, args.seed, pairs))


if __name__ == "__main__":
    main()
