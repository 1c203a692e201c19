"""The optimisation loop: tune a memory system's blamed prompts and settings, keep what validation confirms.

    from memtrace.optimize import optimize
    result = optimize("rag", "locomo:../shared/data/locomo-dev.json", "ws/", rounds=3)
    result.holdout.delta, result.holdout.low, result.holdout.high, result.changes

Each round attributes and verifies the training failures (flow + replay), routes them to the tunables
the blamed operations use (routing.py), proposes changes (an offline guided search over settings, or an
LLM rewrite of a prompt from the grouped feedback), and keeps a change only when validation accuracy
strictly improves. The history is saved as `optimize-history-<system>.json` / `.md` in the workspace.
"""

from ..errors import OptimizeError
from .bootstrap import Interval, paired_bootstrap
from .diagnose import Diagnosis, TunableFeedback, diagnose
from .history import OptimizeResult, RoundRecord, history_paths, save_history
from .loop import optimize, start_config
from .proposals import Proposal, propose
from .routing import Route, route
from .splits import Split, make_split, split_conversations

__all__ = [
    "Diagnosis",
    "Interval",
    "OptimizeError",
    "OptimizeResult",
    "Proposal",
    "RoundRecord",
    "Route",
    "Split",
    "TunableFeedback",
    "diagnose",
    "history_paths",
    "make_split",
    "optimize",
    "paired_bootstrap",
    "propose",
    "route",
    "save_history",
    "split_conversations",
    "start_config",
]
