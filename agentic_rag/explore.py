"""The explore route: a model with tool calling gathers passages itself, inside budgets.

    found = explore(question, brain, library, budgets)   # -> Exploration(hits, steps, note)

The model sees four tools: `search(query, document?)`, `outline(document)`, `read(document, section? | pages?)`
and, when the documents have tables, `query_table(sql)` (one read-only query, as the compute route runs them).
Every passage a tool returns is kept as a hit, so the answer can cite it. The loop is bounded by rounds (model
calls), tool calls and the tokens of what the tools return; each round is reported as it is spent. A tool or a
document that does not exist, bad arguments, or a call made twice gets one corrective result; a second mistake
ends the exploration, and the engine answers from what was read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from advanced_retrieval import Filters, Hit
from agentic_rag.language.text import estimate_tokens, truncate_tokens
from agentic_rag.scope import HEADER_TOKENS, named_section, read_section
from agentic_rag.types import BrainError, ExploreTurn, ToolCall

MAX_ROUNDS = 4  # model calls the exploration may make
MAX_TOOL_CALLS = 12  # tool calls over all rounds
MAX_RESULT_TOKENS = 6000  # what the tools return over all rounds (the passages the answer then reads)
MAX_ONE_RESULT = 1500  # one tool result
MAX_ERRORS = 2  # mistakes before the exploration stops (the first gets a corrective result)
SEARCH_K = 5
MAX_SHOWN_SECTIONS = 40


def tool_specs(with_tables: bool) -> list[dict]:
    """The tools, as function declarations (OpenAI's format; LangChain converts them for Gemini)."""
    def spec(name: str, about: str, properties: dict, required: list[str]) -> dict:
        return {"type": "function", "function": {"name": name, "description": about, "parameters": {
            "type": "object", "properties": properties, "required": required}}}

    text = {"type": "string"}
    tools = [
        spec("search", "Search the documents for passages; optionally only one document (its file name).",
             {"query": {**text, "description": "words the passage would contain"},
              "document": {**text, "description": "a file name from the library (optional)"}}, ["query"]),
        spec("outline", "A document's sections with their pages (and its tables, when it has some).",
             {"document": {**text, "description": "a file name from the library"}}, ["document"]),
        spec("read", "Read a section of a document (its title as the outline gives it), or pages ('3' or '3-5').",
             {"document": text, "section": text, "pages": text}, ["document"]),
    ]
    if with_tables:
        tools.append(spec("query_table", "Run one read-only SQL SELECT (DuckDB) over a document's tables, as named "
                                         "by outline.", {"sql": text}, ["sql"]))
    return tools


@dataclass
class Exploration:
    """What the exploration read (hits, citable), the rounds as spent, and why it stopped."""

    hits: list[Hit] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)
    note: str = ""
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        tools = sum(len(s["calls"]) for s in self.steps)
        return (f"explored in {self.calls} round{'s' if self.calls != 1 else ''}, {tools} tool call"
                f"{'s' if tools != 1 else ''}, {len(self.hits)} passages read ({self.note})")


class Library:
    """The tools' side: the documents, their outlines and tables, over the retriever and the table store."""

    def __init__(self, retriever, outlines=None, tables=None):
        self.retriever, self.outlines, self.tables = retriever, outlines, tables
        self.records = list(retriever.documents())

    def find(self, name: object) -> object | None:
        """The document a name means: its file name, or a unique part of it."""
        if not isinstance(name, str) or not name.strip():
            return None
        wanted = name.strip().casefold()
        exact = [r for r in self.records if r.file_name.casefold() == wanted]
        like = [r for r in self.records if wanted in r.file_name.casefold()]
        return (exact or like or [None])[0] if len(exact) == 1 or len(like) == 1 else None

    def names(self) -> str:
        return ", ".join(r.file_name for r in self.records[:30])


def explore(question: str, think: Callable[[Sequence[dict], Sequence[ExploreTurn]], object], library: Library,
            *, on_round: Callable[[dict], None] | None = None, max_rounds: int = MAX_ROUNDS) -> Exploration:
    """Run the loop: `think(tools, turns)` is one model round (a BrainReply whose value is an ExploreTurn; it
    raises BrainError when the model fails). `on_round(step)` reports each round as it is spent."""
    tools = tool_specs(library.tables is not None)
    names = {t["function"]["name"] for t in tools}
    out, turns, done = Exploration(), [], set()
    budget = {"tool_calls": MAX_TOOL_CALLS, "tokens": MAX_RESULT_TOKENS, "errors": 0}
    for round_no in range(1, max_rounds + 1):
        try:
            reply = think(tools, turns)
        except BrainError as exc:
            out.calls += exc.calls
            out.note = f"the model could not explore ({exc.reason}); answered from what was found"
            if exc.calls:  # a request failed (a client without tools sends none: nothing to warn about)
                out.warnings.append(f"Exploring stopped: {exc.reason}")
            return out
        out.calls += reply.calls
        out.input_tokens += reply.input_tokens
        out.output_tokens += reply.output_tokens
        turn: ExploreTurn = reply.value
        if not turn.calls:
            out.note = "the model had read enough"
            return out
        results, step = [], {"round": round_no, "calls": []}
        for call in turn.calls:
            result, hits, error = _run(call, library, names, done, budget)
            budget["errors"] += bool(error)
            if error and budget["errors"] == 1:
                result += " Please correct the call (the tools, and documents named as listed)."
            cost = estimate_tokens(result)
            if cost > budget["tokens"]:
                result, cost = truncate_tokens(result, max(0, budget["tokens"])), max(0, budget["tokens"])
            budget["tokens"] -= cost
            out.hits += [h for h in hits if h.chunk.id not in {x.chunk.id for x in out.hits}]
            results.append(result)
            step["calls"].append({"tool": call.name, "args": call.args if isinstance(call.args, dict) else str(call.args),
                                  "result": result[:200], "error": error, "passages": len(hits)})
        step["left"] = {"rounds": max_rounds - round_no, "tool_calls": budget["tool_calls"],
                        "tokens": max(0, budget["tokens"])}
        out.steps.append(step)
        if on_round is not None:
            on_round(step)
        turns.append(ExploreTurn(turn.calls, turn.text, tuple(results)))
        if budget["errors"] >= MAX_ERRORS:
            out.note = f"stopped after {budget['errors']} mistaken calls"
            return out
        if budget["tokens"] <= 0 or budget["tool_calls"] <= 0:
            out.note = "its token budget was spent" if budget["tokens"] <= 0 else "its tool-call budget was spent"
            return out
    out.note = f"its round budget ({max_rounds}) was spent"
    return out


def _run(call: ToolCall, library: Library, names: set[str], done: set[str],
         budget: dict) -> tuple[str, list[Hit], str]:
    """(result text, passages, error) of one call; an error is also a result the model reads."""
    if budget["tool_calls"] <= 0:
        return "Not run: the tool-call budget is spent.", [], "over budget"
    budget["tool_calls"] -= 1
    if call.name not in names:
        return f"Error: there is no tool {call.name!r}; the tools are {', '.join(sorted(names))}.", [], "unknown tool"
    if not isinstance(call.args, dict):
        return f"Error: the arguments of {call.name} are not valid JSON: {str(call.args)[:100]!r}.", [], "bad arguments"
    key = json.dumps([call.name, call.args], sort_keys=True, default=str)
    if key in done:
        return "Error: this exact call was already made; its result is above.", [], "repeated call"
    done.add(key)
    try:
        return {"search": _search, "outline": _outline, "read": _read, "query_table": _query}[call.name](
            call.args, library)
    except _Mistake as mistake:
        return f"Error: {mistake}", [], str(mistake)


class _Mistake(Exception):
    """Arguments the tools cannot use (a missing or unknown document, an empty query)."""


def _document(args: dict, library: Library, required: bool = True):
    name = args.get("document")
    if name in (None, "") and not required:
        return None
    record = library.find(name)
    if record is None:
        raise _Mistake(f"no document {name!r} in the library; its documents are: {library.names()}.")
    return record


def _search(args: dict, library: Library) -> tuple[str, list[Hit], str]:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _Mistake("search needs a 'query' (the words to look for).")
    record = _document(args, library, required=False)
    filters = Filters(doc_ids=(record.doc_id,)) if record is not None else None
    hits = library.retriever.retrieve(query, k=SEARCH_K, strategy="hybrid", filters=filters)
    return _passages(hits, f"{len(hits)} passages for {query!r}"), list(hits), ""


def _outline(args: dict, library: Library) -> tuple[str, list[Hit], str]:
    record = _document(args, library)
    outline = library.outlines.outline(record.doc_id) if library.outlines is not None else None
    if outline is None or not outline.sections:
        from advanced_retrieval.library.outline import build_outline

        outline = build_outline(library.retriever.document_chunks(record.doc_id))
    lines = [f"{'  ' * (s.level - 1)}{s.title} ({s.start}{'-' + s.end if s.end != s.start else ''})"
             for s in outline.all()[:MAX_SHOWN_SECTIONS]]
    tables = library.tables.tables([record.doc_id]) if library.tables is not None else []
    shown = [f'table "{t.physical}" ({t.name}: {t.title or "untitled"}): columns '
             + ", ".join(f'"{c.sql}"' for c in t.columns[:12]) for t in tables[:8]]
    return (f"{record.file_name}: " + ("no headings; by " + outline.source if outline.flat else "sections") + "\n"
            + "\n".join(lines) + ("\nTables:\n" + "\n".join(shown) if shown else "")), [], ""


def _read(args: dict, library: Library) -> tuple[str, list[Hit], str]:
    record = _document(args, library)
    chunks = sorted(library.retriever.document_chunks(record.doc_id), key=lambda c: c.ordinal)
    section, pages = args.get("section"), args.get("pages")
    if isinstance(section, str) and section.strip():
        outline = library.outlines.outline(record.doc_id) if library.outlines is not None else None
        if outline is not None and named_section(outline, section, record.file_name) is None and \
                outline.find(section) is None:
            raise _Mistake(f"{record.file_name} has no section {section!r}; call outline for its sections.")
        reading = read_section(chunks, section, MAX_ONE_RESULT, outline)
        if reading is None:
            raise _Mistake(f"{record.file_name} has no section {section!r}; call outline for its sections.")
        hits = list(reading.hits)
    elif isinstance(pages, (str, int)) and str(pages).strip():
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", str(pages))
        if m is None:
            raise _Mistake(f"pages must be like '3' or '3-5', not {pages!r}.")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        picked = [c for c in chunks if c.location.page is not None and first <= c.location.page <= last]
        if not picked:
            raise _Mistake(f"{record.file_name} has no pages {pages}.")
        hits, used = [], 0
        for c in picked:
            used += estimate_tokens(c.text) + HEADER_TOKENS
            if hits and used > MAX_ONE_RESULT:
                break
            hits.append(Hit(chunk=c, score=1.0, rank=len(hits) + 1, strategy="explore"))
    else:
        raise _Mistake("read needs a 'section' (as the outline names it) or 'pages'.")
    return _passages(hits, f"{record.file_name}, {section or 'pages ' + str(pages)}"), hits, ""


def _query(args: dict, library: Library) -> tuple[str, list[Hit], str]:
    sql = args.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        raise _Mistake("query_table needs 'sql' (one SELECT).")
    result = library.tables.query(sql)
    if not result.ok:
        raise _Mistake(f"the query failed: {result.error}")
    rows = "\n".join(" | ".join(str(v) for v in r) for r in result.rows[:20])
    return f"{' | '.join(result.columns)}\n{rows}" + ("\n(more rows not shown)" if len(result.rows) > 20 else ""), [], ""


def _passages(hits: Sequence[Hit], head: str) -> str:
    """Passages as the model reads them: where each is, then its text, within MAX_ONE_RESULT tokens."""
    out, used = [head + ":"], 0
    for h in hits:
        text = f"[{h.chunk.file_name}, {h.chunk.location.label()}]\n{h.chunk.text}"
        cost = estimate_tokens(text)
        if used + cost > MAX_ONE_RESULT:
            text = truncate_tokens(text, max(0, MAX_ONE_RESULT - used))
            out.append(text)
            break
        out.append(text)
        used += cost
    return "\n\n".join(out)
