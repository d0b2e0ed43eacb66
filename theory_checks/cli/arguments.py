"""The options several sub-commands of ``calcheck`` share, each defined once.

Each ``add_*`` function adds one option to a sub-command's parser: its type (and so its
validation), its metavar and, where the sub-commands agree, its default and its help. Where a
sub-command says something of its own (what its ``--jobs`` parallelise, its ``--seed``'s
default), it passes that.
"""

from __future__ import annotations

import argparse

__all__ = [
    "BUDGET_NAMES",
    "DEFAULT_OUT",
    "DefaultsHelp",
    "RecordGiven",
    "add_alpha_argument",
    "add_budget_argument",
    "add_false_alarm_argument",
    "add_jobs_argument",
    "add_json_argument",
    "add_n_argument",
    "add_n_bins_argument",
    "add_out_argument",
    "add_progress_argument",
    "add_seed_argument",
    "add_study_argument",
    "given_on_command_line",
    "resolve_jobs",
]

#: The output folder of ``run`` and ``search`` (and the folder ``audit`` reads).
DEFAULT_OUT = "calcheck-results"
#: The budgets of ``run`` and ``search`` (each gives them its own meaning).
BUDGET_NAMES = ("quick", "full")


class DefaultsHelp(argparse.HelpFormatter):
    """Help that states each option's default (unless None/False or said in the text)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)"


#: The namespace attribute where :class:`RecordGiven` notes the options the command line gave.
GIVEN_OPTIONS = "given_options"


class RecordGiven(argparse.Action):
    """Store an option's value, and note that the command line gave it.

    An option with a default (``--criterion failure``, ``--seed 0``) reads the same whether
    it was typed or not; a study file's key yields only to a typed one
    (:func:`given_on_command_line`). The help is that of a plain stored option.
    """

    def __call__(self, parser, namespace, values, option_string=None):
        """Store ``values`` at the option's ``dest`` and add ``dest`` to the given ones."""
        setattr(namespace, self.dest, values)
        given = getattr(namespace, GIVEN_OPTIONS, frozenset())
        setattr(namespace, GIVEN_OPTIONS, given | {self.dest})


def given_on_command_line(args, dest: str) -> bool:
    """Whether the command line gave the option stored in ``dest`` (by :class:`RecordGiven`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments.
    dest : str
        The option's attribute (``"criterion"`` for ``--criterion``); an option stored by
        another action answers False (one whose default is None says it by its value).
    """
    return dest in getattr(args, GIVEN_OPTIONS, ())


# named as before the options shared it: for a value that is not an integer at all, argparse
# prints the type's name ("argument --jobs: invalid _positive_int value: 'x'")
def _positive_int(text):
    try:
        v = int(text)
    except ValueError:  # argparse would name this function: "invalid _positive_int value"
        raise argparse.ArgumentTypeError(
            f"expected a positive integer or -1, got {text!r}"
        ) from None
    if v < 1 and v != -1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1, got {text!r}")
    return v


def add_jobs_argument(s: argparse.ArgumentParser, help: str) -> None:
    """``--jobs N``: workers, a positive integer or -1 (all); see :func:`resolve_jobs`."""
    s.add_argument("--jobs", type=_positive_int, default=None, help=help)


def resolve_jobs(args) -> None:
    """``--jobs`` not given (or -1): every CPU this process may use; the reason is kept."""
    if getattr(args, "jobs", 0) is None or getattr(args, "jobs", 0) == -1:
        from calcheck.simulations.parallel import usable_cpus

        args.jobs_chosen = "every CPU this process may use" if args.jobs is None else "-1: all"
        args.jobs = usable_cpus()


def add_seed_argument(s: argparse.ArgumentParser, default: int, help: str = "root seed") -> None:
    """``--seed SEED``: the root seed of the command's random draws."""
    s.add_argument("--seed", type=int, default=default, help=help, action=RecordGiven)


def add_out_argument(
    s: argparse.ArgumentParser, default: str = DEFAULT_OUT, help: str = "output folder"
) -> None:
    """``--out OUT``: the folder the command writes in."""
    s.add_argument("--out", default=default, help=help)


def add_budget_argument(s: argparse.ArgumentParser, help: str) -> None:
    """``--budget {quick,full}``: the size of the work (quick by default)."""
    s.add_argument("--budget", choices=BUDGET_NAMES, default="quick", help=help, action=RecordGiven)


def add_study_argument(s: argparse.ArgumentParser, help: str, metavar: str | None = None) -> None:
    """``--study FILE``: a TOML study file."""
    s.add_argument("--study", metavar=metavar, help=help)


def add_progress_argument(s: argparse.ArgumentParser, help: str) -> None:
    """``--progress`` / ``--no-progress``: a progress bar (None: when stderr is a terminal)."""
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None, help=help)


def add_json_argument(s: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--json``: print the command's result as JSON."""
    s.add_argument("--json", action="store_true", help=help)


def add_n_argument(
    s: argparse.ArgumentParser, help: str = "calibration points", default: int | None = None
) -> None:
    """``--n N``: the sample size."""
    s.add_argument("--n", type=int, default=default, help=help)


def add_n_bins_argument(
    s: argparse.ArgumentParser, help: str = "number of bins B", default: int | None = None
) -> None:
    """``--n-bins N_BINS``: the number of bins."""
    s.add_argument("--n-bins", type=int, default=default, help=help)


def add_alpha_argument(s: argparse.ArgumentParser, help: str, default: float | None = None) -> None:
    """``--alpha ALPHA``: the miscoverage."""
    s.add_argument("--alpha", type=float, default=default, help=help, action=RecordGiven)


def add_false_alarm_argument(
    s: argparse.ArgumentParser, help: str, default: float | None = None
) -> None:
    """``--false-alarm FALSE_ALARM``: the false-alarm rate per check."""
    s.add_argument("--false-alarm", type=float, default=default, help=help)
