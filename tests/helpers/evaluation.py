"""Scripted collaborators for evaluation runs: a retriever and an agent answering from a script, and the five-question
case the runner and report tests share."""

from __future__ import annotations

from advanced_retrieval import Hit
from agentic_rag import AnswerResult, Citation, Claim, Usage
from document_processor import Chunk, Location
from evaluation import EvalQuestion, GoldSource


def chunk(file_name: str, page: int | None = None, text: str = "t", **where) -> Chunk:
    location = Location(page=page, **where)
    return Chunk(id=f"{file_name}-{page}-{text}", doc_id=file_name, file_name=file_name,
                 file_type=file_name.rsplit(".", 1)[-1], text=text, location=location)


class ScriptedRetriever:
    """Returns a fixed ranking per question, and records the calls."""

    def __init__(self, rankings: dict[str, list[Chunk]]):
        self.rankings = rankings
        self.calls = []

    def retrieve(self, query, k, strategy, filters):
        self.calls.append((query, k, strategy, filters))
        if query == "boom?":
            raise RuntimeError("index gone")
        return [Hit(chunk=c, score=1.0 / r, rank=r, strategy=strategy)
                for r, c in enumerate(self.rankings.get(query, [])[:k], start=1)]


class ScriptedAgent:
    """Answers from a script; a missing question raises, like a broken model call."""

    def __init__(self, answers: dict[str, AnswerResult]):
        self.answers = answers
        self.asked = []

    def ask(self, question, strategy="auto"):
        self.asked.append((question, strategy))
        return self.answers[question]


class KB:
    def __init__(self, retriever):
        self.retriever = retriever


def _answer(text, files=(), verdicts=(), calls=0, mode="offline (extractive)"):
    return AnswerResult(text, mode, citations=tuple(Citation(i, f, f"d{i}", Location(page=i), "")
                                                    for i, f in enumerate(files, 1)),
                        claims=tuple(Claim(f"claim {i}", v) for i, v in enumerate(verdicts)), confidence=0.5,
                        usage=Usage(calls, 10 * calls, calls))


def _scripted_case():
    questions = [
        EvalQuestion("heads?", (GoldSource("a.pdf", (5,)),), (("8", "eight"),), "precision", "q1", 1),
        EvalQuestion("price?", (GoldSource("b.docx"),), (("2,980",),), "table", "q2", 2),
        EvalQuestion("salary?", kind="unanswerable", id="q3", line=3),
        EvalQuestion("layers?", (GoldSource("a.pdf", (3,)),), (("6",),), "precision", "q4", 4),
        EvalQuestion("boom?", (GoldSource("a.pdf", (1,)),), (("1",),), "precision", "q5", 5),
    ]
    rankings = {
        "heads?": [chunk("a.pdf", 4), chunk("a.pdf", 5)],
        "price?": [chunk("b.docx", paragraph=2)],
        "layers?": [chunk("x.pdf", 3)] * 12 + [chunk("a.pdf", 3)],
    }
    answers = {
        "heads?": _answer("It uses 8 heads [1].", ["a.pdf"], ["supported"], calls=2),
        "price?": _answer("I could not find this in the documents.", calls=1),
        "salary?": _answer("I could not find this in the documents.", calls=1),
        "layers?": _answer("It has 6 layers [2].", ["a.pdf"], ["partial"], calls=2),
    }
    return questions, ScriptedRetriever(rankings), ScriptedAgent(answers)
