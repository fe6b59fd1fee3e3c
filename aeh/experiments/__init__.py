"""Experiments: orchestrations of several runs through the public `aeh.run` path.

    frame = aeh.experiments.recovery_curve("core", rates=(0, 0.1, 0.3), mode="burst")
    new_run = aeh.experiments.replay_run(run_id)        # same trajectories, today's graders

Each run is stored like any other; the statistics come from `aeh.stats`, the charts from
`aeh.report.views`, and the diffs between runs from `aeh.analysis`.
"""

from aeh.experiments._recovery import COLUMNS, format_recovery_table, recovery_curve, recovery_curve_async
from aeh.experiments._replay import replay_run, replay_run_async

__all__ = ["COLUMNS", "format_recovery_table", "recovery_curve", "recovery_curve_async", "replay_run",
           "replay_run_async"]
