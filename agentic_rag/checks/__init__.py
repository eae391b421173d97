"""Checking an answer, in one call: its claims, a verdict on each, what it leaves unanswered, and the answer with
a visible mark after each claim the checks did not support.

    check = check_answer(draft, blocks, question=q, coverage=coverage, judge=model_judge)
    check.claims     # Claim per statement: the judge's verdict, overruled where it cannot be right
    check.flagged    # the answer text as the reader sees it, with its marks

`judge(claims, cited_blocks)` is a brain's verification (a model's, or the offline one); it returns
(verdicts, missing) or None when it could not judge. A claim it skipped gets the offline lexical check instead of
a silent pass. Whatever the judge says, the checks no model is trusted with (citations of no passage, pages its
passage is not on, figures its passages neither state nor let one compute, arithmetic) have the last word
(checks.verdicts.check_claim).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from agentic_rag.checks.claims import FOUND_PREFIX, ClaimDraft, flag_answer, is_refusal, split_claims
from agentic_rag.checks.verdicts import check_claim, claim_fit, lexical_verdict, offline_verdict, quote_body
from agentic_rag.language.text import asked_years, years_in
from agentic_rag.tables.plan import other_quarter, quarters_of
from agentic_rag.types import Claim, ContextBlock, Coverage, Draft, Verdict

Judgement = tuple[Sequence[Verdict], Sequence[str]]  # verdicts, parts of the question the answer misses
Judge = Callable[[Sequence[ClaimDraft], Sequence[ContextBlock]], Judgement | None]

__all__ = ["FOUND_PREFIX", "AnswerCheck", "ClaimDraft", "Judge", "Judgement", "check_answer", "claim_fit",
           "is_refusal", "offline_verdict", "quote_body", "split_claims"]


@dataclass(frozen=True)
class AnswerCheck:
    """What the checks found in one answer."""

    drafts: tuple[ClaimDraft, ...]  # the claims as written
    claims: tuple[Claim, ...]  # one checked verdict per draft, in order
    missing: tuple[str, ...]  # parts of the question the answer does not cover
    refused: bool  # the answer as a whole says the documents do not hold the answer
    flagged: str  # the answer with a mark after each unsupported or partly supported claim
    judged: bool = False  # the judge gave its verdicts (False: none asked, or it could not judge)


def check_answer(draft: Draft, blocks: Sequence[ContextBlock], *, question: str,
                 coverage: Sequence[Coverage] = (), judge: Judge | None = None) -> AnswerCheck:
    """Split `draft` into claims, have `judge` rule on them, overrule what cannot be right, flag the answer.

    An answer that claims nothing and is no refusal misses the whole question.
    """
    drafts = split_claims(draft.text, refused=draft.refused)
    by_n = {b.n: b for b in blocks}
    cited = [b for b in blocks if any(b.n in d.citations for d in drafts)]
    judgement = judge(drafts, cited) if judge is not None and drafts else None
    verdicts, missing = judgement if judgement is not None else ((), ())
    given = {v.index: v for v in verdicts}
    claims = tuple(check_claim(d, given.get(i) or lexical_verdict(i, d, by_n), by_n, coverage, question)
                   for i, d in enumerate(drafts))
    claims = other_period_claims(drafts, claims, question)
    missing = tuple(dict.fromkeys([*missing, *draft.unanswered]))
    refused = draft.refused or (bool(draft.text.strip()) and is_refusal(draft.text))
    if not drafts and not draft.unanswered and not refused:
        missing = missing or (question,)
    return AnswerCheck(drafts, claims, missing, refused, flag_answer(draft.text, drafts, claims),
                       judgement is not None)


def other_period_claims(drafts: Sequence[ClaimDraft], claims: Sequence[Claim], question: str) -> tuple[Claim, ...]:
    """A question about 2021 answered with what was true in 2020: each claim naming only years other than the
    question's states another period, and is refuted. When some claim names an asked year, claims about other
    years are its context ("up from $4.2 million in 2020") and stand. A question naming a span ("since 2019")
    asks about no single year, and is not checked."""
    claims = _other_quarter_claims(drafts, claims, question)
    asked = asked_years(question)
    named = [years_in(d.text) for d in drafts]
    if not asked or any(n & asked for n in named):
        return tuple(claims)
    return tuple(replace(c, verdict="unsupported", refuted=True,
                         reason=f"it is about {', '.join(sorted(n))}; the question asks about "
                                f"{', '.join(sorted(asked))}")
                 if n and c.verdict != "unsupported" else c for c, n in zip(claims, named, strict=True))


def _other_quarter_claims(drafts: Sequence[ClaimDraft], claims: Sequence[Claim], question: str) -> tuple[Claim, ...]:
    """The same for quarters: a question about the second quarter of 2023 answered only with claims about other
    quarters ("in the first quarter of 2023, revenue was ...") is answered with another period."""
    asked = quarters_of(question)
    named = [quarters_of(d.text) for d in drafts]
    if not asked or any(n and not other_quarter(asked, n) for n in named):
        return tuple(claims)
    return tuple(replace(c, verdict="unsupported", refuted=True,
                         reason=f"it is about another quarter than the question's ({_quarters(asked)})")
                 if n and c.verdict != "unsupported" else c for c, n in zip(claims, named, strict=True))


def _quarters(quarters: frozenset[str]) -> str:
    return ", ".join(f"Q{q[-1]} {q[:-2]}".strip() for q in sorted(quarters))

