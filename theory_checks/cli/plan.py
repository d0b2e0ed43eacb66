"""``calcheck plan``: the replicates a check needs to detect a coverage shortfall."""

from __future__ import annotations

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..running.plan import MAX_REPS, MAX_REPS_LIMIT, MIN_SHORTFALL, plan
from .arguments import (
    add_alpha_argument,
    add_false_alarm_argument,
    add_json_argument,
    add_n_argument,
    add_n_bins_argument,
)

__all__ = ["add_plan_arguments", "cmd_plan"]


def add_plan_arguments(s) -> None:
    """The options of ``calcheck plan`` (see :func:`calcheck.theory_checks.running.plan.plan`)."""
    what = s.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--shortfall",
        type=float,
        help=f"coverage shortfall below 1 - alpha (at least {MIN_SHORTFALL:g}: the work grows "
        "as 1 / shortfall)",
    )
    what.add_argument(
        "--true-coverage",
        type=float,
        help=f"the true coverage to detect (at least {MIN_SHORTFALL:g} below 1 - alpha)",
    )
    what.add_argument(
        "--bound-factor",
        type=float,
        help="detect the bound times this factor (in (0, 1]): its exact coverage at "
        "constant eta is the true coverage (needs --guarantee, --n, --n-bins)",
    )
    add_alpha_argument(s, "the claim is coverage 1 - alpha", default=0.1)
    s.add_argument("--power", type=float, default=0.9, help="target probability of flagging")
    add_false_alarm_argument(
        s, "false-alarm rate per check (the suite's verdicts)", default=DEFAULT_FALSE_ALARM
    )
    s.add_argument("--cells", type=int, default=1, help="cells of the check (Bonferroni over them)")
    s.add_argument("--guarantee", help="guarantee id, with --bound-factor (e.g. gr21.thm3)")
    add_n_argument(s, "calibration points, with --bound-factor")
    add_n_bins_argument(s, "number of bins B, with --bound-factor")
    s.add_argument(
        "--eta",
        type=float,
        help="constant eta, with --bound-factor (default: 0.5; the worst constant eta can "
        "lie just off 1/2)",
    )
    s.add_argument(
        "--max-reps",
        type=int,
        default=MAX_REPS,
        help=f"largest count searched (default: %(default)s; at most {MAX_REPS_LIMIT})",
    )
    add_json_argument(s, "print the plan as JSON")


def cmd_plan(args) -> int:
    """``calcheck plan``: print the plan (its summary, or JSON)."""
    result = plan(
        alpha=args.alpha,
        shortfall=args.shortfall,
        true_coverage=args.true_coverage,
        bound_factor=args.bound_factor,
        power=args.power,
        false_alarm=args.false_alarm,
        cells=args.cells,
        guarantee=args.guarantee,
        n=args.n,
        n_bins=args.n_bins,
        eta=args.eta,
        max_reps=args.max_reps,
    )
    print(result.to_json(indent=1) if args.json else result.summary())
    return 0
