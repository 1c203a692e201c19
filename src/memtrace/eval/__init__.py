"""Answer scoring and judges: LoCoMo-compatible F1 / exact match, and recorded strict, F1 or LLM verdicts.

    from memtrace.eval import make_judge
    judge = make_judge()                      # strict offline (strict.py); an LLM judge when given a client
    verdict = judge.judge("Where does Caroline live?", ["Boston"], "She lives in Boston")
    verdict.correct, verdict.score, verdict.method

Every `judge(...)` call is recorded as a `judge` operation (category `evaluation`) when a run is
recording. See scoring.py for exactly which LoCoMo conventions are implemented and where we differ.
"""

from ..errors import JudgeOutputError
from .choose import make_judge
from .headline import Judged, JudgeFigure, headline_judge, judge_figures, strict_correct
from .judges import (
    JUDGE_PROMPT,
    JUDGE_SCHEMA,
    ChatClient,
    ChatReply,
    F1Judge,
    Judge,
    LLMJudge,
    Verdict,
    parse_judge_reply,
)
from .reliability import JudgeCheck, KnownCase, check_judge, nonsense_probes
from .scoring import (
    LOCOMO_CATEGORIES,
    Gold,
    answer_tokens,
    as_gold_list,
    best_exact_match,
    best_f1,
    exact_match,
    is_unanswerable,
    locomo_score,
    multi_answer_f1,
    normalize_answer,
    says_unanswerable,
    score_answer,
    scoring_rule,
    token_f1,
)

__all__ = [
    "JUDGE_PROMPT",
    "JUDGE_SCHEMA",
    "LOCOMO_CATEGORIES",
    "ChatClient",
    "ChatReply",
    "F1Judge",
    "Gold",
    "Judge",
    "JudgeCheck",
    "JudgeFigure",
    "JudgeOutputError",
    "Judged",
    "KnownCase",
    "LLMJudge",
    "Verdict",
    "answer_tokens",
    "as_gold_list",
    "best_exact_match",
    "best_f1",
    "check_judge",
    "exact_match",
    "headline_judge",
    "is_unanswerable",
    "judge_figures",
    "locomo_score",
    "make_judge",
    "multi_answer_f1",
    "nonsense_probes",
    "normalize_answer",
    "parse_judge_reply",
    "says_unanswerable",
    "score_answer",
    "scoring_rule",
    "strict_correct",
    "token_f1",
]
