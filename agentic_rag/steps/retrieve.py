"""Step 3, retrieve: sub-questions searched concurrently, results deduplicated, every document checked when asked.

The retriever is an agentic_rag.seams.Retriever: `retrieve`, `documents` and `document_chunks` (which lets an
exhaustive check read a whole document).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from advanced_retrieval import Filters, Hit
from advanced_retrieval.library.outline import build_outline
from agentic_rag.brains.model import ModelBrain
from agentic_rag.brains.prompts import ANSWER_SYSTEM
from agentic_rag.context import check_document
from agentic_rag.explore import MAX_ROUNDS, Exploration, Library, explore
from agentic_rag.language.quotes import Ask
from agentic_rag.language.text import estimate_tokens, overlap, terms
from agentic_rag.scope import (
    MIN_SECTION_TOKENS,
    list_object,
    read_document,
    read_list,
    read_section,
    target_document,
)
from agentic_rag.state import AgentState, Run
from agentic_rag.steps.run import StepOut, Thought, consult, limited_brain, traced
from agentic_rag.tables.compute import OTHER_READING, compute
from agentic_rag.tables.fiscal import stated_naming
from agentic_rag.tables.plan import TableAsk, asks_reason, periods_of
from agentic_rag.types import MODEL_MODES, Coverage

log = logging.getLogger(__name__)

MAX_WORKERS = 4
LIST_K = 40  # passages a list question looks at in its document, per query (the usual k is 8)
MAX_GROUPS = 3  # answer calls a scoped reading may take before one combines them
MAX_DOCUMENTS = 8  # documents a summary of every document reads at once
COVERAGE_STRATEGY = "hybrid"
TOP_IN_TRACE = 3


def first_queries(state: AgentState) -> tuple[str, ...]:
    """The first round's queries: the sub-questions, then the plan's queries in the documents' words (a negation
    or exhaustive question searches its one concept only: its coverage check reads every document anyway)."""
    subs = tuple(state["sub_questions"])
    if state["analysis"].checks_every_document:
        return subs
    asked = {s.casefold() for s in subs}
    return subs + tuple(q for q in state.get("doc_queries", ()) if q.casefold() not in asked)


def retrieve(state: AgentState, run: Run) -> dict:
    """Step 3: sub-questions (or the verifier's feedback) searched concurrently; every document when needed."""
    loops = state.get("loops", 0)
    queries = state.get("feedback", ()) if loops else first_queries(state)
    k = state.get("k", 8) * (2 if loops else 1)  # a retry looks deeper
    received = {"queries": list(queries), "k": k, "strategy": state.get("strategy", "auto"), "round": loops + 1}

    def body() -> StepOut:
        if not queries:
            return StepOut({"new_hits": 0}, "nothing to search for: the round only corrects the answer")
        rnd = retrieve_round(run.retriever, state, queries, k, check_documents=not loops)
        explored = _explore(state, run, rnd) if not loops and _explores(state, run, rnd) else None
        if explored is not None and explored.hits:
            label = f"{EXPLORED} {len(explored.hits)} passages the model read"
            rnd = Round({**rnd.updates, "sub_hits": ((label, tuple(explored.hits)), *rnd.updates["sub_hits"])},
                        rnd.summary, rnd.details, rnd.warnings)
        if not loops and state["analysis"].scope != "passage":
            out = _with_reading(state, run, rnd)
        elif loops or run.tables is None or not (asks_figures(state["analysis"]) or _tabular(rnd)
                                                 or _dated_offline(state)):
            out = StepOut(rnd.updates, rnd.summary, rnd.details, warnings=rnd.warnings)
        else:
            out = _with_computation(state, run, rnd)
        return out if explored is None else _with_exploration(out, explored, state["mode"])

    return traced("retrieve", run, received, body)


def asks_figures(analysis) -> bool:
    """Whether a question asks for a figure a table may hold: a number, a comparison, an aggregate, a ranking."""
    if asks_reason(analysis.standalone):
        return False  # "what drove the reduction in SG&A as a percent of net sales?": a cause, in words
    return analysis.question_type in ("numeric", "comparison") or TableAsk.of(analysis.standalone).op != "lookup" \
        or Ask.of(analysis.standalone).wants_number


CITED_BEFORE = "the previous answer's sources"  # the label of the passages a follow-up comparison keeps
EXPLORED = "explore:"  # the label of the passages the explore route read, in sub_hits
THIN = 0.3  # below this best cosine, and no passage holding every word of the question: the explore route looks further


def _explores(state: AgentState, run: Run, rnd: Round) -> bool:
    """Whether the explore route runs: a model that calls tools, a question that spans a document (every item
    of a kind) or a passage question whose first retrieval came back thin, and calls left for it besides the
    answer and its check."""
    if state.get("mode") not in MODEL_MODES or not isinstance(run.brain, ModelBrain) or _rounds_left(state, run) < 1:
        return False
    scope = state["analysis"].scope
    if scope == "list":
        return True
    if scope != "passage":
        return False  # a document, section or library reading reads what it needs, whatever the first hits were
    hits = [h for _, found in rnd.updates["sub_hits"] for h in found]
    best = max((h.vector_score or 0.0 for h in hits), default=0.0)
    return best < THIN and not _holds_every_term(state["analysis"].standalone, hits)


def _holds_every_term(question: str, hits) -> bool:
    """Whether a passage found holds every content word of the question: then keyword search found the place,
    however low its cosine (a passage of other matter around one sentence, vectors that are not a model's)."""
    wanted = set(terms(question, drop_query_words=True))
    return bool(wanted) and any(overlap(wanted, h.chunk.text) == 1.0 for h in hits)


def _rounds_left(state: AgentState, run: Run) -> int:
    used = sum(t["llm_calls"] for t in state.get("trace", ()))
    return min(MAX_ROUNDS, run.budgets.llm_calls - used - 2)  # the answer and its check


def _explore(state: AgentState, run: Run, rnd: Round) -> Exploration:
    """The explore route (agentic_rag.explore): the model's tool calls, each round reported as it is spent."""
    question = state["analysis"].standalone
    library = Library(run.retriever, run.outlines, run.tables)

    def think(tools, turns):
        return limited_brain(run, state).explore(question, tools, turns, deadline=run.deadline)

    return explore(question, think, library, max_rounds=_rounds_left(state, run),
                   on_round=lambda step: run.emit("retrieve", {"step": "retrieve", "status": "exploring",
                                                               "round": step}))


def _with_exploration(out: StepOut, explored: Exploration, mode: str) -> StepOut:
    """The step's result with the exploration's rounds, cost and note added."""
    details = {**out.details, "explore": {"steps": explored.steps, "note": explored.note}}
    return StepOut(out.updates, f"{out.summary}; {explored.summary()}", details, out.calls + explored.calls,
                   out.input_tokens + explored.input_tokens, out.output_tokens + explored.output_tokens,
                   out.warnings + tuple(explored.warnings), mode)


def _dated_offline(state: AgentState) -> bool:
    """Offline, a question naming a period ("Verizon's wireless equipment revenues for 2022"): a figure of that
    period is likely asked, and a statement's row in the period's column answers it where a quote may be of any
    year; the tables are asked (they plan nothing unless a row and the period's column are named). With a model,
    asking the tables costs a call, and the model reads the passages' figures itself."""
    return state.get("mode") not in MODEL_MODES and bool(periods_of(state["analysis"].standalone))


TABULAR_HITS = 3  # how many of the first passages found may be a table's for the tables to be asked


def _tabular(rnd: Round) -> bool:
    """Whether one of the best passages found is a table's (a sheet's cells, a table's rows): a question
    answered there may be a lookup the tables answer exactly ("the value for well D7 at cycle 20"), and the
    paragraph that introduces a table often ranks above the table itself."""
    best = next((found[:TABULAR_HITS] for _, found in rnd.updates["sub_hits"] if found), [])
    return any(h.chunk.location.sheet is not None or h.chunk.text.lstrip().startswith("|") for h in best)


def _with_computation(state: AgentState, run: Run, rnd: Round) -> StepOut:
    """The round's passages, and before them the result of one query over the tables they point at (the model
    writes it while the question is in a model's hands, the rules otherwise)."""
    question = state["analysis"].standalone
    hits = [h for _, found in rnd.updates["sub_hits"] for h in found]
    thoughts: list[Thought] = []

    def write_sql(asked: str, schemas: str) -> str | None:
        t = consult("retrieve", state, run, lambda brain, dl: brain.table_sql(asked, schemas, deadline=dl),
                    "the rules chose the query over the tables instead")
        thoughts.append(t)
        return t.reply.value

    model = state.get("mode") in MODEL_MODES
    computation = compute(question, hits, run.tables, write_sql if model else None,
                          figures=asks_figures(state["analysis"]), embedder=run.embedder,
                          naming=lambda doc_id: stated_naming(c.text for c in run.retriever.document_chunks(doc_id)))
    spent = thoughts[0] if thoughts else None
    usage = (spent.calls, spent.input_tokens, spent.output_tokens) if spent else (0, 0, 0)
    warnings = rnd.warnings + (spent.warnings if spent else ())
    if computation is None:
        return StepOut(rnd.updates, rnd.summary, rnd.details, *usage, warnings=warnings,
                       mode=spent.mode if spent else "")
    details = {**rnd.details, "computed": computation.to_dict()}
    updates = {**rnd.updates, "computed": computation.to_dict()}
    if computation.hit is None:
        summary = f"{rnd.summary}; no calculation from the tables ({computation.note})"
    else:
        label = f"tables: {computation.hit.chunk.text.splitlines()[1][:120]}"
        rival = computation.rival
        found = (computation.hit,) if rival is None or rival.hit is None else (computation.hit, rival.hit)
        updates["sub_hits"] = ((label, found), *rnd.updates["sub_hits"])
        summary = f"{rnd.summary}; computed from {computation.cells} ({computation.source})"
        why = next((ln.removeprefix(OTHER_READING).strip() for ln in rival.hit.chunk.text.splitlines()
                    if ln.startswith(OTHER_READING)), "") if rival is not None and rival.hit is not None else ""
        if rival is not None and why:
            summary += f"; read otherwise, {why} ({rival.cells}): the answer cannot tell which one is meant"
        elif rival is not None:
            summary += (f"; another table reads the question almost as well and gives another figure "
                        f"({rival.cells}): the answer cannot tell which one is meant")
    return StepOut(updates, summary, details, *usage, warnings=warnings, mode=spent.mode if spent else "")


def _with_reading(state: AgentState, run: Run, rnd: Round) -> StepOut:
    """A question about a whole document, a section, every item of a kind or every document: instead of the top
    passages, what the scope needs (agentic_rag.scope), read within the budget, with a line saying what it covered.
    Falls back to the round's passages, saying why, when no document or section can be told."""
    analysis, filters = state["analysis"], state.get("filters")
    hits = [h for _, found in rnd.updates["sub_hits"] for h in found]
    groups = reading_groups(state, run)
    budget = reading_budget(run.budgets.context_tokens, analysis.standalone) * groups
    if analysis.scope == "library":
        return _read_library(state, run, rnd, budget, groups)
    doc_id = _named_file(analysis.standalone, run.retriever, filters) or target_document(hits, filters)
    if doc_id is None:
        return StepOut(rnd.updates, f"{rnd.summary}; no document to read as a whole (nothing was found)",
                       rnd.details, warnings=rnd.warnings)
    try:
        chunks = run.retriever.document_chunks(doc_id)
        outline = _outline(run, doc_id, chunks)
    except Exception as exc:  # the store failed: the round's passages are still an answer, with the reason
        why = f"Could not read the document as a whole ({type(exc).__name__}: {exc}); answered from the top passages."
        return StepOut(rnd.updates, f"{rnd.summary}; {why}", rnd.details, warnings=rnd.warnings + (why,))
    reading = None
    if analysis.scope == "section":
        reading = read_section(chunks, analysis.standalone, budget, outline)
    elif analysis.scope == "list" and list_object(analysis.standalone):  # "all the risk factors": their section
        reading = read_section(chunks, analysis.standalone, budget, outline, named=list_object(analysis.standalone))
    if reading is None and analysis.scope == "list":
        jobs = [(q, Filters(doc_ids=(doc_id,)), COVERAGE_STRATEGY) for q in first_queries(state)]
        found = [h for _, hs, _ in _search_all(run.retriever, jobs, LIST_K) for h in hs]
        reading = read_list(_best_first(found), outline, chunks[0].file_name if chunks else "", budget)
    if reading is None and analysis.scope == "section":
        return StepOut(rnd.updates, f"{rnd.summary}; no section of the document matches the question's words: "
                       "answered from the top passages", rnd.details, warnings=rnd.warnings)
    if reading is None:
        reading = read_document(chunks, budget, outline)
    if not reading.hits:
        return StepOut(rnd.updates, f"{rnd.summary}; the document has no passages to read", rnd.details,
                       warnings=rnd.warnings)
    said = {**reading.to_dict(), "groups": groups, "per_call": budget // groups}
    explored = tuple(e for e in rnd.updates["sub_hits"] if e[0].startswith(EXPLORED))  # the model's own reads
    updates = {**rnd.updates, "sub_hits": (*explored, (f"{reading.kind}: {reading.file_name}", reading.hits)),
               "reading": said, "new_hits": len(reading.hits)}
    details = {**rnd.details, "reading": said, "outline_source": outline.source}
    return StepOut(updates, f"{rnd.summary}; {reading.coverage}", details, warnings=rnd.warnings)


def _read_library(state: AgentState, run: Run, rnd: Round, budget: int, groups: int) -> StepOut:
    """A summary of every document (within the user's filter): the opening passages of each one's sections,
    the budget shared between at most MAX_DOCUMENTS documents; the others are named as not read."""
    records = _documents(run.retriever, state.get("filters"))
    chosen, left = records[:MAX_DOCUMENTS], records[MAX_DOCUMENTS:]
    readings = []
    for record in chosen:
        try:
            chunks = run.retriever.document_chunks(record.doc_id)
            readings.append(read_document(chunks, budget // max(1, len(chosen)), _outline(run, record.doc_id, chunks)))
        except Exception as exc:  # one unreadable document: the others are still read, and this one is named
            left.append(record)
            log.warning("could not read %s as a whole: %s", record.file_name, exc)
    readings = [r for r in readings if r.hits]
    if not readings:
        return StepOut(rnd.updates, f"{rnd.summary}; no document to read", rnd.details, warnings=rnd.warnings)
    coverage = f"Read the opening passages of {len(readings)} document{'s' if len(readings) != 1 else ''}: " + \
        "; ".join(f"{r.file_name} ({len(r.read)} of {len(r.read) + len(r.left)} {r._unit()})" for r in readings) + "."
    if left:
        coverage += f" Not read: {', '.join(r.file_name for r in left[:6])}" + (
            f" and {len(left) - 6} more" if len(left) > 6 else "") + f" (at most {MAX_DOCUMENTS} documents at once)."
    said = {"kind": "library", "coverage": coverage, "documents": [r.to_dict() for r in readings],
            "read": [s for r in readings for s in r.to_dict()["read"]], "groups": groups,
            "per_call": budget // groups, "passages": sum(len(r.hits) for r in readings)}
    updates = {**rnd.updates, "sub_hits": tuple((f"document: {r.file_name}", r.hits) for r in readings),
               "reading": said, "new_hits": said["passages"]}
    return StepOut(updates, f"{rnd.summary}; {coverage}", {**rnd.details, "reading": said}, warnings=rnd.warnings)


def reading_groups(state: AgentState, run: Run) -> int:
    """How many answer calls a scoped reading may take (then one to combine them): 1 offline and for a summary
    of one document (its sections' openings fit one call), else up to MAX_GROUPS while the call budget keeps room
    for the combining call and the check."""
    scope = state["analysis"].scope
    if state.get("mode") not in MODEL_MODES:
        return 1 if scope == "document" else MAX_GROUPS  # offline reads cost no calls
    if scope == "document":
        return 1
    used = sum(t["llm_calls"] for t in state.get("trace", ()))
    left = run.budgets.llm_calls - used - 2  # the combining call and the check
    return max(1, min(MAX_GROUPS, left))


def reading_budget(context_tokens: int, question: str) -> int:
    """The passages' share of one answer call: the context budget less the instructions, headers and question."""
    return max(MIN_SECTION_TOKENS, int((context_tokens - estimate_tokens(ANSWER_SYSTEM + question) - 300) * 0.9))


def _outline(run: Run, doc_id: str, chunks):
    kept = run.outlines.outline(doc_id) if run.outlines is not None else None
    return kept if kept is not None and kept.sections else build_outline(chunks)


def _best_first(hits: Sequence[Hit]) -> list[Hit]:
    """Hits of several queries merged, with their pages' other found chunks: each chunk once, at its best rank,
    best first."""
    best: dict[str, Hit] = {}
    for found in hits:  # a hit's page mates were found with it (retrieval ranks by page)
        for hit in (found, *(Hit(c, found.score, found.rank, strategy=found.strategy) for c in found.page_chunks)):
            if hit.chunk.id not in best or hit.rank < best[hit.chunk.id].rank:
                best[hit.chunk.id] = hit
    return sorted(best.values(), key=lambda h: (h.rank, -h.score))


@dataclass(frozen=True)
class Round:
    updates: dict
    summary: str
    details: dict
    warnings: tuple[str, ...] = ()


def retrieve_round(retriever, state: dict, queries: Sequence[str], k: int, *, check_documents: bool) -> Round:
    """Search every query (and, for negation/exhaustive questions, every document) and merge with earlier hits."""
    strategy, filters = state.get("strategy", "auto"), state.get("filters")
    jobs = [(q, filters, strategy) for q in queries]
    analysis = state["analysis"]
    records = _documents(retriever, filters) if check_documents and analysis.checks_every_document else []
    concept = analysis.key_concepts[0] if analysis.key_concepts else analysis.standalone
    # Hybrid whatever the user chose: its BM25 half scores every chunk of the document, so a document whose
    # best hits lack the concept does not contain its words anywhere.
    jobs += [(concept, _narrow(filters, r.doc_id), COVERAGE_STRATEGY) for r in records]
    results = _search_all(retriever, jobs, k)
    warnings = tuple(err for _, _, err in results if err)
    found = list(zip(queries, (hits for _, hits, _ in results[: len(queries)]), strict=True))
    coverage = tuple(_cover(retriever, r, concept, hits) for r, (_, hits, _) in zip(records, results[len(queries):],
                                                                                    strict=True))
    found += [(f'"{concept}" in {c.file_name}', (c.hit,)) for c in coverage if c.hit is not None]
    if check_documents and analysis.follow_up and analysis.question_type == "comparison":
        kept = _cited_before(retriever, state.get("cited_before", ()))
        found += [(CITED_BEFORE, kept)] if kept else []
    before = {h.chunk.id for _, hits in state.get("sub_hits", ()) for h in hits}
    added = {h.chunk.id for _, hits in found for h in hits} - before
    updates = {"sub_hits": tuple(state.get("sub_hits", ())) + tuple((q, tuple(h)) for q, h in found),
               "new_hits": len(added)}
    if check_documents and analysis.checks_every_document:
        updates["coverage"] = coverage
    summary = f"{len(queries)} quer{'ies' if len(queries) != 1 else 'y'}: {len(before | added)} distinct passages"
    summary += f" ({len(added)} new)" + (f"; checked {len(records)} documents for \"{concept}\"" if records else "")
    details = {"queries": [_describe(q, hits, strategy) for q, hits in found[: len(queries)]],
               "coverage": [{"file": c.file_name, "mentioned": c.mentioned, "checked": c.chunks_checked}
                            for c in coverage]}
    kept = [hits for q, hits in found if q == CITED_BEFORE]
    if kept:
        summary += f"; kept {len(kept[0])} passages of the answer it follows"
        details["kept"] = {"label": CITED_BEFORE, "passages": [f"{h.chunk.file_name} {h.chunk.location.label()}"
                                                              for h in kept[0]]}
    return Round(updates, summary, details, warnings)


def _cited_before(retriever, cited: Sequence[tuple[str, str]]) -> tuple[Hit, ...]:
    """The stored chunks of the passages the previous answer cited (found by document and text), as hits after
    the fresh ones: a follow-up that compares ("Compare it with BERT") needs the side it was built on."""
    chunks = []
    for doc_id in dict.fromkeys(d for d, _ in cited):
        texts = {t for d, t in cited if d == doc_id}
        chunks += [c for c in retriever.document_chunks(doc_id) if c.text in texts]  # [] once deleted
    return tuple(Hit(c, 0.0, i + 1, strategy="cited before") for i, c in enumerate(chunks))


def _search_all(retriever, jobs: Sequence[tuple[str, Filters | None, str]], k: int) -> list:
    """(query, hits, error) per job, in order; a failing query is reported and the others go on."""
    def one(job):
        query, filters, strategy = job
        try:
            return query, tuple(retriever.retrieve(query, k=k, strategy=strategy, filters=filters)), ""
        except Exception as exc:  # a collaborator's failure for one query must not sink the others
            return query, (), f"Retrieval failed for {query!r}: {type(exc).__name__}: {exc}"

    if not jobs:
        return []
    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(jobs))) as pool:
        return list(pool.map(one, jobs))


def _named_file(question: str, retriever, filters: Filters | None) -> str | None:
    """The document whose file name the question writes out ("Summarize 60316.docx", "the SampleShow deck"): its
    whole name or its name without the extension, as a word of the question; None unless exactly one is."""
    asked = question.casefold()
    try:
        records = _documents(retriever, filters)
    except Exception as exc:  # the list of documents failed: the passages found still name one
        log.warning("could not list the documents to match a file name: %s", exc)
        return None
    named = {r.doc_id for r in records for name in (r.file_name, r.file_name.rsplit(".", 1)[0])
             if len(name) >= 3 and re.search(rf"(?<![\w.]){re.escape(name.casefold())}(?![\w])", asked)}
    return next(iter(named)) if len(named) == 1 else None


def _documents(retriever, filters: Filters | None) -> list:
    records = list(retriever.documents())
    if filters is None:
        return records
    return [r for r in records if (filters.doc_ids is None or r.doc_id in filters.doc_ids)
            and (filters.file_types is None or r.file_type in filters.file_types)]


def _narrow(filters: Filters | None, doc_id: str) -> Filters:
    """One document, within the user's file-type filter (the document list is already intersected)."""
    return Filters(doc_ids=(doc_id,), file_types=filters.file_types if filters else None)


def _cover(retriever, record, concept: str, hits: Sequence[Hit]) -> Coverage:
    """Does the document mention `concept`? Its best hits first; when none does, every one of its chunks is read,
    so "does NOT mention it (N passages checked)" counts passages really read. `record.chunks` is a count
    (vector_db.DocumentRecord), or from simpler retrievers the chunks themselves."""
    listed = record.chunks if isinstance(record.chunks, (list, tuple)) else ()
    first = check_document(record.doc_id, record.file_name, concept, hits, listed)
    if first.mentioned or listed:
        return first
    try:
        chunks = retriever.document_chunks(record.doc_id)
    except Exception as exc:  # the store went away: the count then stays that of the hits actually read
        log.warning("could not read %s to check it for %r: %s", record.file_name, concept, exc)
        return first
    return check_document(record.doc_id, record.file_name, concept, (), chunks)


def _describe(query: str, hits: Sequence[Hit], strategy: str) -> dict:
    return {
        "query": query, "hits": len(hits), "strategy": hits[0].strategy if hits else strategy,
        "top": [{"file": h.chunk.file_name, "location": h.chunk.location.label(), "score": round(h.score, 4),
                 "vector_score": None if h.vector_score is None else round(h.vector_score, 4),
                 "bm25_score": None if h.bm25_score is None else round(h.bm25_score, 4)}
                for h in hits[:TOP_IN_TRACE]],
    }
