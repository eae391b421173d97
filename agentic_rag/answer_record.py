"""An AnswerResult as JSON-ready data and back, whole: what a saved conversation needs to draw an answer again
(citations, claims, the analysis, every retrieval with its scores, the coverage of every document, the trace).

AnswerResult.to_dict() is the public, smaller JSON (the CLI's and the eval's); this one also keeps the hits.
A record from an older version that lacks a field gives that field's default, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping

from advanced_retrieval import Hit
from agentic_rag.types import Analysis, AnswerResult, Citation, Claim, Coverage, Usage
from document_processor import Chunk, Location

RECORD_VERSION = 1


def answer_record(result: AnswerResult) -> dict:
    """Everything `result` holds, as JSON-ready data (answer_from_record reads it back)."""
    record = result.to_dict()
    record.update(
        version=RECORD_VERSION, question=result.question, sub_questions=list(result.sub_questions),
        analysis=result.analysis.to_dict() if result.analysis is not None else None,
        claims=[{**c.to_dict(), "evidence": c.evidence} for c in result.claims],
        sub_hits=[[query, [_hit_record(h) for h in hits]] for query, hits in result.sub_hits],
        coverage=[{"doc_id": c.doc_id, "file_name": c.file_name, "mentioned": c.mentioned,
                   "hit": _hit_record(c.hit) if c.hit is not None else None, "chunks_checked": c.chunks_checked}
                  for c in result.coverage])
    return record


def answer_from_record(record: Mapping) -> AnswerResult:
    """The AnswerResult `record` (from answer_record) describes."""
    analysis = record.get("analysis")
    usage = record.get("usage") or {}
    return AnswerResult(
        answer=str(record.get("answer", "")), mode=str(record.get("mode", "offline")),
        citations=tuple(Citation(int(c["n"]), c["file"], c["doc_id"], Location.from_dict(c.get("location") or {}),
                                 c.get("text", "")) for c in record.get("citations") or ()),
        claims=tuple(Claim(c.get("text", ""), c.get("verdict", "?"), tuple(c.get("citations") or ()),
                           int(c.get("evidence", 0)), c.get("reason", ""), bool(c.get("refuted", False)))
                     for c in record.get("claims") or ()),
        confidence=float(record.get("confidence", 0.0)), trace=tuple(dict(t) for t in record.get("trace") or ()),
        usage=Usage(int(usage.get("llm_calls", 0)), int(usage.get("input_tokens", 0)),
                    int(usage.get("output_tokens", 0))),
        seconds=float(record.get("seconds", 0.0)), warnings=tuple(record.get("warnings") or ()),
        question=str(record.get("question", "")),
        analysis=_analysis(analysis) if analysis else None,
        sub_questions=tuple(record.get("sub_questions") or ()),
        sub_hits=tuple((query, tuple(_hit(h) for h in hits)) for query, hits in record.get("sub_hits") or ()),
        coverage=tuple(Coverage(c["doc_id"], c["file_name"], bool(c["mentioned"]),
                                _hit(c["hit"]) if c.get("hit") else None, int(c.get("chunks_checked", 0)))
                       for c in record.get("coverage") or ()),
        confidence_basis=str(record.get("confidence_basis", "nothing found")),
        confidence_features=dict(record.get("confidence_features") or {}),
    )


def _hit_record(hit: Hit) -> dict:
    return {"chunk": hit.chunk.to_dict(), "score": hit.score, "rank": hit.rank, "vector_score": hit.vector_score,
            "bm25_score": hit.bm25_score, "strategy": hit.strategy}


def _hit(data: Mapping) -> Hit:
    return Hit(Chunk.from_dict(data["chunk"]), float(data["score"]), int(data["rank"]), data.get("vector_score"),
               data.get("bm25_score"), data.get("strategy", "hybrid"))


def _analysis(data: Mapping) -> Analysis:
    return Analysis(data.get("standalone", ""), data.get("intent", ""), data.get("complexity", "simple"),
                    data.get("question_type", "fact"), tuple(data.get("key_concepts") or ()),
                    data.get("language", "en"), bool(data.get("follow_up", False)), data.get("source", "rules"),
                    data.get("scope", "passage"))
