"""The agent's value types: budgets, the analysis, numbered context, claims, brain replies and the result."""

from __future__ import annotations

from dataclasses import dataclass, field

from advanced_retrieval import Hit
from document_processor import Location

QUESTION_TYPES = ("fact", "list", "comparison", "numeric", "negation", "exhaustive", "summary", "follow-up")
VERDICTS = ("supported", "partial", "unsupported")
VERDICT_SCORE = {"supported": 1.0, "partial": 0.5, "unsupported": 0.0}
NOT_FOUND = "I could not find this in the documents."
# Gemini starts a refusal with this mark in any language (it translates NOT_FOUND); the brain strips it and sets
# Draft.refused, so a refusal in Spanish claims nothing and scores 0 as one in English does.
NOT_FOUND_MARK = "[[NOT FOUND]]"
OFFLINE_LABEL = "offline (extractive)"
PLAN_CALLS = ("always", "when-needed")
MODEL_MODES = ("gemini", "local")  # brains that write with a language model (the offline brain quotes)


class BrainError(Exception):
    """A language-model step that failed after its bounded retries; `reason` is safe to show (no API key).

    The usage of the failed attempts travels with it, so budgets stay honest. `malformed` says the model was
    reachable but its reply unusable: a plan then falls back to the rules while the model still answers.
    """

    def __init__(self, reason: str, *, calls: int = 0, input_tokens: int = 0, output_tokens: int = 0,
                 malformed: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.malformed = malformed  # the service answered, but not in the shape asked for (bad JSON)
        self.calls = calls
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens


@dataclass(frozen=True)
class Budgets:
    """Per-question limits. Bad values raise ValueError at construction.

    llm_calls: language-model requests (retries included); seconds: wall time for the whole question;
    context_tokens: estimated input tokens per call; max_loops: verify -> retrieve rounds;
    retry_seconds: how long one failing Gemini step may keep retrying before the question goes offline;
    region_tokens: how far one passage may grow into its page's other found chunks (context.page_region; 0 = off);
    plan_call: "always" asks the model for every plan; "when-needed" plans a simple standalone question in the
    documents' language with the rules and asks the model only for the rest (follow-ups, several questions,
    comparisons, whole documents, other languages): a local model writes its plan before its first words;
    answer_prompt_tokens: > 0 caps a model's answer prompt (instructions, question and passages, each passage cut
    to the sentences that bear on the question: context.window) so that a model reading prompts at a CPU's speed
    starts writing soon; 0 = whole passages within context_tokens. A whole-document reading is not capped.
    """

    llm_calls: int = 8
    seconds: float = 60.0
    context_tokens: int = 6000
    max_loops: int = 2
    retry_seconds: float = 18.0  # with the offline finish, a failing Gemini costs at most ~20 s
    region_tokens: int = 700
    plan_call: str = "always"
    answer_prompt_tokens: int = 0

    def __post_init__(self):
        if self.llm_calls < 0 or self.max_loops < 0:
            raise ValueError("llm_calls and max_loops must be >= 0")
        if self.seconds <= 0 or self.retry_seconds <= 0:
            raise ValueError("seconds and retry_seconds must be > 0")
        if self.region_tokens < 0:
            raise ValueError("region_tokens must be >= 0 (0 turns the page regions off)")
        if self.context_tokens < 500:
            raise ValueError("context_tokens must be >= 500 (room for the instructions and one passage)")
        if self.answer_prompt_tokens and self.answer_prompt_tokens < 500:
            raise ValueError("answer_prompt_tokens must be 0 (no cap) or >= 500")
        if self.plan_call not in PLAN_CALLS:
            raise ValueError(f"plan_call must be one of {', '.join(PLAN_CALLS)}")


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the explore route: its id, the tool's name, and its arguments (a dict; the raw text of
    arguments that did not parse as JSON)."""

    id: str
    name: str
    args: object


@dataclass(frozen=True)
class ExploreTurn:
    """One round of the explore route: the model's calls (none: it is done) and text, and, once the engine ran
    them, one result per call (what the model reads next)."""

    calls: tuple[ToolCall, ...] = ()
    text: str = ""
    results: tuple[str, ...] = ()


@dataclass(frozen=True)
class Analysis:
    """What the question asks. `standalone` is the question rewritten without references to the chat history."""

    standalone: str
    intent: str = ""
    complexity: str = "simple"
    question_type: str = "fact"
    key_concepts: tuple[str, ...] = ()
    language: str = "en"
    follow_up: bool = False
    source: str = "rules"
    scope: str = "passage"  # passage | document | section | list | library (agentic_rag.scope.scope_of)

    @property
    def checks_every_document(self) -> bool:
        return self.question_type in ("negation", "exhaustive")

    def to_dict(self) -> dict:
        return {
            "standalone": self.standalone, "intent": self.intent, "complexity": self.complexity,
            "question_type": self.question_type, "key_concepts": list(self.key_concepts),
            "language": self.language, "follow_up": self.follow_up, "source": self.source, "scope": self.scope,
        }


@dataclass(frozen=True)
class Plan:
    """An analysis and the sub-questions proposed with it (one shared LLM call, or the rules)."""

    analysis: Analysis
    sub_questions: tuple[str, ...] = ()
    search_queries: tuple[str, ...] = ()  # the question in the documents' words (model plans only)


@dataclass(frozen=True)
class ContextBlock:
    """A numbered passage the answer may cite as [Pn] (n stable for the whole question); `queries` are the queries (sub-questions) that found it."""

    n: int
    hit: Hit
    queries: tuple[str, ...] = ()

    @property
    def chunk(self):
        return self.hit.chunk

    def header(self) -> str:
        """'[P2] report.pdf, p. 3 (Results > Revenue)'."""
        c = self.hit.chunk
        where = c.location.label()
        head = f"[P{self.n}] {c.file_name}" + (f", {where}" if where else "")
        return head + (f" ({' > '.join(c.heading_path)})" if c.heading_path else "")


@dataclass(frozen=True)
class Coverage:
    """Whether one document mentions the concept of a negation/exhaustive question, and how it was checked."""

    doc_id: str
    file_name: str
    mentioned: bool
    hit: Hit | None = None
    chunks_checked: int = 0


@dataclass(frozen=True)
class Draft:
    """An answer text, the sub-questions it could not answer (the verifier's 'missing' for extractive mode), and
    whether it is a refusal as a whole (Gemini's NOT_FOUND_MARK, in whatever language it wrote), and whether
    it was cut short."""

    text: str
    unanswered: tuple[str, ...] = ()
    refused: bool = False
    truncated: bool = False  # the model stopped at its output limit and could not finish


@dataclass(frozen=True)
class Verdict:
    """The brain's judgement of claim `index` (0-based): verdict, evidence passage number (0 = none), why."""

    index: int
    verdict: str
    evidence: int = 0
    reason: str = ""


@dataclass(frozen=True)
class Claim:
    """One checked statement of the answer."""

    text: str
    verdict: str
    citations: tuple[int, ...] = ()
    evidence: int = 0
    reason: str = ""
    refuted: bool = False  # a check proved it wrong (no such passage, page or figure; bad arithmetic)

    def to_dict(self) -> dict:
        return {"text": self.text, "verdict": self.verdict, "citations": list(self.citations), "reason": self.reason,
                "refuted": self.refuted}


@dataclass(frozen=True)
class BrainReply:
    """A brain's answer to one step plus what it cost."""

    value: object
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Citation:
    """A cited passage: number, file, document, where in it, and the passage text."""

    n: int
    file: str
    doc_id: str
    location: Location
    text: str

    def to_dict(self) -> dict:
        return {"n": self.n, "file": self.file, "doc_id": self.doc_id, "location": self.location.to_dict(),
                "text": self.text}


@dataclass(frozen=True)
class Usage:
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict:
        return {"llm_calls": self.llm_calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


@dataclass(frozen=True)
class AnswerResult:
    """Everything one question produced. to_dict() is the public JSON; the rest feeds the UI's reasoning panel.

    `confidence_basis` says where `confidence` came from: "verified claims", "retrieval scores (not verified)"
    or "nothing found".
    """

    answer: str
    mode: str
    citations: tuple[Citation, ...] = ()
    claims: tuple[Claim, ...] = ()
    confidence: float = 0.0
    trace: tuple[dict, ...] = ()
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    warnings: tuple[str, ...] = ()
    question: str = ""
    analysis: Analysis | None = None
    sub_questions: tuple[str, ...] = ()
    sub_hits: tuple[tuple[str, tuple[Hit, ...]], ...] = ()
    coverage: tuple[Coverage, ...] = ()
    confidence_basis: str = "nothing found"
    confidence_features: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON the CLI, the app and the eval read."""
        return {
            "answer": self.answer,
            "mode": self.mode,
            "citations": [c.to_dict() for c in self.citations],
            "claims": [c.to_dict() for c in self.claims],
            "confidence": self.confidence,
            "confidence_basis": self.confidence_basis,
            "confidence_features": dict(self.confidence_features),
            "trace": [dict(t) for t in self.trace],
            "usage": self.usage.to_dict(),
            "seconds": self.seconds,
            "warnings": list(self.warnings),
        }
