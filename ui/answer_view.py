"""What the app shows under an answer, built as strings: source cards, the reasoning, the answer's caption.

Pure functions over an AnswerResult (agentic_rag.types) and its Hits; no streamlit. HTML goes out only through
`ui_helpers.highlight_html` (escaped first) and Markdown only through `ui_helpers.md_text` or `md_safe`, so document text and
model output are always shown as text.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Sequence

from agentic_rag.checks.instructions import instruction_in
from agentic_rag.tables.compute import shown
from agentic_rag.types import Citation
from ui import helpers as ui
from ui import source_viewer as sv

VERDICT_COLOUR = {"supported": "green", "partial": "orange", "unsupported": "red"}
STEP_TITLES = {"analyze": "Analyse", "decompose": "Decompose", "retrieve": "Retrieve", "synthesize": "Synthesise",
               "verify": "Verify"}

SOURCE_CSS = """<style>
.docagent-source{border:1px solid #e3e6ee;border-radius:.5rem;padding:.6rem .8rem;margin:0 0 .6rem 0;
  background:#fbfcfe;font-size:.92rem;line-height:1.45}
.docagent-source .head{font-weight:600;margin-bottom:.25rem}
.docagent-source .n{display:inline-block;min-width:1.6rem;color:#3b5bdb}
.docagent-source .where{color:#555;font-weight:400}
.docagent-source .text{white-space:pre-wrap;word-break:break-word;color:#222}
.docagent-source .text.neighbour{color:#666}
.docagent-source mark{background:#ffe066;padding:0 .1em;border-radius:.15em}
.docagent-source .scores{color:#595959;font-size:.8rem;margin-top:.3rem}
.docagent-source table{border-collapse:collapse;margin:.3rem 0;white-space:normal;font-size:.85rem}
.docagent-source th,.docagent-source td{border:1px solid #e3e6ee;padding:.15rem .5rem;text-align:left}
.docagent-source th{background:#f1f3f8}
.docagent-source td.num{white-space:nowrap;text-align:right}
.docagent-source .gone{color:#a61e4d;font-size:.85rem;margin-bottom:.25rem}
</style>"""
GONE_NOTE = "This document has been deleted from the library since; the passage is shown as the answer quoted it."
REPLACED_NOTE = ("This document has been replaced by a newer version since (same file name); the passage is shown "
                 "as the answer quoted it from the earlier version.")


class Present:
    """The library's documents as an old answer's citations meet them: still there, replaced by a newer version of
    the same file name (its doc_id is then a new one), or deleted. `doc_id in present` says whether it is there."""

    def __init__(self, documents: Sequence):
        self._ids = {d.doc_id for d in documents}
        self._names = {unicodedata.normalize("NFC", d.file_name) for d in documents}

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._ids

    def note(self, citation) -> str:
        """'' when the cited document is in the library; else why it is not (replaced or deleted)."""
        if citation.doc_id in self._ids:
            return ""
        return REPLACED_NOTE if unicodedata.normalize("NFC", citation.file) in self._names else GONE_NOTE


location_label = ui.location_label  # re-exported: the app reads places through this module


def all_hits(answer) -> list:
    """Every Hit the answer's retrievals returned, best first per sub-question, each chunk once."""
    seen: dict[str, object] = {}
    for _, hits in answer.sub_hits:
        for hit in hits:
            seen.setdefault(hit.chunk.id, hit)
    for coverage in answer.coverage:
        if coverage.hit is not None:
            seen.setdefault(coverage.hit.chunk.id, coverage.hit)
    return list(seen.values())


_ESCAPED_CITE = re.compile(r"\\\[(\d+(?:\s*,\s*\d+)*)\\\]")  # \[1\] or \[1, 2\]: a citation after md_safe


def source_anchor(index: int) -> str:
    """The link target prefix of answer `index`'s citations: "#source-<index>-" + the citation's number."""
    return f"#source-{int(index)}-"


def linked_citations(safe_markdown: str, numbers: Iterable[int], index: int) -> str:
    """The answer (already through md_safe) with each [n] that is one of its citations made a link to
    `source_anchor(index) + n`; the page's citation script turns a click (or Enter) on it into opening source n.
    Only the answer's own numbers are linked, only to this in-page anchor, so no document text becomes a link."""
    wanted = {int(n) for n in numbers}

    def link(match: re.Match) -> str:
        parts = [p.strip() for p in match.group(1).split(",")]
        if not parts or any(int(p) not in wanted for p in parts):
            return match.group(0)
        if len(parts) == 1:  # the whole "[n]" is the link: a larger target
            return f"[\\[{parts[0]}\\]]({source_anchor(index)}{parts[0]})"
        return "\\[" + ", ".join(f"[{p}]({source_anchor(index)}{p})" for p in parts) + "\\]"

    return _ESCAPED_CITE.sub(link, safe_markdown)


def closest_citations(answer, limit: int = 3) -> tuple:
    """For an answer that cites nothing (a refusal), its closest retrieved passages as numbered citations, so
    the places the refusal names ("Closest passages … p. 3; p. 4") open in the viewer like cited ones: one per
    place, as the refusal names each place once (two passages of one slide are one source)."""
    first = {}
    for hit in all_hits(answer)[:limit]:
        first.setdefault((hit.chunk.doc_id, hit.chunk.location), hit)
    return tuple(Citation(n, hit.chunk.file_name, hit.chunk.doc_id, hit.chunk.location, hit.chunk.text)
                 for n, hit in enumerate(first.values(), start=1))


def hit_for_citation(citation, hits: Iterable):
    """The retrieved Hit a citation quotes: same document and place, and its text starts the same way.

    The context builder may cut a long passage to fit the budget, so the citation's text can be a prefix of
    the chunk's. Returns None when no hit matches (e.g. the answer came from an older engine).
    """
    head = " ".join(citation.text.split())[:80]
    fallback = None
    for hit in hits:
        chunk = hit.chunk
        if chunk.doc_id != citation.doc_id or chunk.location != citation.location:
            continue
        if " ".join(chunk.text.split()).startswith(head):
            return hit
        fallback = fallback or hit
    return fallback


def source_card_html(citation, hit, terms: Sequence[str], neighbours: Sequence = (), head: bool = True,
                     gone: str = "") -> str:
    """One source as HTML: number, file and place, the passage with matched words marked, its scores.

    `neighbours` (chunks before/after, in order, the cited one included) are shown greyed around it;
    `head=False` leaves out the number-and-place line (the viewer shows it above the card); `gone` is the note
    of a document deleted or replaced since (`Present.note`; the passage is shown as the answer quoted it).
    Everything from the document is escaped by highlight_html before the marks are added.
    """
    where = location_label(citation.location)
    title = (f'<div class="head"><span class="n">[{int(citation.n)}]</span>{html.escape(citation.file)}'
             + (f' <span class="where">· {html.escape(where)}</span>' if where else "") + "</div>")
    body = []
    cited_id = hit.chunk.id if hit is not None else None
    for chunk in neighbours:
        if chunk.id == cited_id:
            body.append(_passage(citation.text, terms))
        else:
            body.append(_passage(chunk.text, (), css="text neighbour"))  # a neighbouring table drawn as a table
    if not body:
        body.append(_passage(citation.text, terms))
    scores = f'<div class="scores">{html.escape(ui.scores_text(hit))}</div>' if hit is not None else ""
    note = f'<div class="gone">{html.escape(gone)}</div>' if gone else ""
    steers = instruction_in(citation.text)
    if steers:
        note += (f'<div class="gone">⚠ This passage {html.escape(steers)}. It is shown as what the document says; '
                 "a claim that rests on it alone is not supported.</div>")
    return f'<div class="docagent-source">{title if head else ""}{note}{"".join(body)}{scores}</div>'


def _passage(text: str, terms: Sequence[str], css: str = "text") -> str:
    """The passage as escaped, highlighted HTML; Markdown pipe tables (how sheets are indexed) become tables."""
    parts = []
    for is_table, block in _blocks(text):
        table = sv.markdown_table(block) if is_table else None
        parts.append(_table_html(table, terms) if table is not None else ui.highlight_html(block, terms))
    return f'<div class="{css}">{"".join(parts)}</div>'


def _blocks(text: str) -> list[tuple[bool, str]]:
    """Runs of consecutive lines, each flagged True when its lines are pipe-table rows."""
    blocks: list[tuple[bool, list[str]]] = []
    for line in text.splitlines(keepends=True):
        is_table = line.lstrip().startswith("|")
        if blocks and blocks[-1][0] == is_table:
            blocks[-1][1].append(line)
        else:
            blocks.append((is_table, [line]))
    return [(is_table, "".join(lines)) for is_table, lines in blocks]


_NUMBER_CELL = re.compile(r"[-−(]?[$€£¥]?\s?[\d.,]+\s?(?:%|[kKmMbB]n?)?\)?")  # 1,234.5  $(12.50)  62.3%  (3)


def _cell_html(cell: str, terms: Sequence[str]) -> str:
    """One table cell; a number keeps to one line, right-aligned (a narrow window broke 1,234.5 across lines)."""
    number = ' class="num"' if _NUMBER_CELL.fullmatch(cell.strip()) else ""
    return f"<td{number}>{ui.highlight_html(cell, terms)}</td>"


def _table_html(table, terms: Sequence[str]) -> str:
    head = "".join(f"<th>{ui.highlight_html(c, terms)}</th>" for c in table.columns)
    rows = "".join("<tr>" + "".join(_cell_html(c, terms) for c in row) + "</tr>" for row in table.rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def answer_caption(answer) -> str:
    """'Gemini · confidence 82 % (verified claims) · 4.1 s · 3 LLM calls · 2,345 tokens' (Markdown-safe)."""
    mode = {"gemini": "Gemini", "local": "Local model"}.get(answer.mode, "Offline (extractive)")
    parts = [mode, f"confidence {answer.confidence:.0%} ({answer.confidence_basis})".replace(" ()", "")]
    parts.append(ui.format_seconds(answer.seconds))
    usage = answer.usage
    if usage.llm_calls:
        parts.append(ui.plural(usage.llm_calls, "LLM call"))
        parts.append(f"{usage.input_tokens + usage.output_tokens:,} tokens")
    return ui.md_text(" · ".join(parts))


def analysis_markdown(answer) -> str:
    """The analysis step: the question as understood, its type and key concepts."""
    analysis = answer.analysis
    if analysis is None:
        return "_No analysis recorded._"
    lines = [f"**Understood as:** {ui.md_text(analysis.standalone)}",
             f"**Type:** {analysis.question_type} · **complexity:** {analysis.complexity}"
             f" · **by:** {analysis.source}"]
    if analysis.key_concepts:
        lines.append("**Key concepts:** " + ", ".join(ui.md_text(c) for c in analysis.key_concepts))
    if analysis.intent:
        lines.append(f"**Intent:** {ui.md_text(analysis.intent)}")
    return "  \n".join(lines)


def retrieval_markdown(answer, top: int = 3) -> str:
    """Per sub-question: how many passages came back, by which strategy, and the best few."""
    sub_hits = answer.sub_hits
    if not sub_hits:
        return "_No retrieval recorded._"
    blocks = []
    for i, (question, hits) in enumerate(sub_hits, start=1):
        strategies = sorted({h.strategy for h in hits})
        lines = [f"{i}. **{ui.md_text(question)}** — {ui.plural(len(hits), 'passage')}"
                 + (f" ({', '.join(strategies)})" if strategies else "")]
        for hit in hits[:top]:
            where = hit.chunk.location.label()
            lines.append(f"    - {ui.md_text(hit.chunk.file_name)}{' · ' + ui.md_text(where) if where else ''} — "
                         f"{ui.md_text(ui.scores_text(hit))}")
        blocks.append("\n".join(lines))
    coverage = answer.coverage
    if coverage:
        mentioned = sum(1 for c in coverage if c.mentioned)
        blocks.append(f"Checked every document: {mentioned} of {len(coverage)} mention it.")
    return "\n".join(blocks)


def computation_markdown(answer) -> str:
    """The query the engine ran over a table for this answer: the table, the SQL, its result and the cells it
    read; or why it computed nothing. '' when the question asked for no figure."""
    found = next((t["details"]["computed"] for t in answer.trace
                  if t.get("step") == "retrieve" and (t.get("details") or {}).get("computed")), None)
    if not found:
        return ""
    if not found.get("sql") or found.get("note"):
        return f"_No calculation from the tables: {ui.md_text(found.get('note') or 'no query')}._"
    lines = [f"**From** {ui.md_text(found.get('table') or 'the tables')} · written by "
             f"{'the model' if found.get('source') == 'model' else 'the rules'}",
             f"```sql\n{found['sql'].replace('`', chr(39))}\n```"]
    columns, rows = found.get("columns") or [], found.get("rows") or []
    if columns and rows:
        lines.append("| " + " | ".join(ui.md_text(str(c)) for c in columns) + " |")
        lines.append("|" + " --- |" * len(columns))
        lines += ["| " + " | ".join(ui.md_text(shown(v)) for v in row) + " |" for row in rows]
    notes = ["_(more rows were cut at the row limit)_"] if found.get("truncated") else []
    if found.get("cells"):
        notes.append(f"**Cells read:** {ui.md_text(found['cells'])}")
    return "\n\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "".join(f"\n\n{n}" for n in notes)


def reading_markdown(answer) -> str:
    """What a whole-document, section or list question read (the coverage line and the sections), and the
    explore route's rounds: each tool call, what it returned and the budget left after the round. '' when
    neither ran."""
    details = next((t.get("details") or {} for t in answer.trace if t.get("step") == "retrieve"), {})
    lines = []
    reading = details.get("reading")
    if reading:
        lines.append(f"**Read:** {ui.md_text(reading.get('coverage', ''))}")
        if reading.get("groups", 1) > 1:
            lines.append(f"Up to {reading['groups']} answer calls of about {reading.get('per_call', 0):,} tokens "
                         "each, then one to merge them.")
    explored = details.get("explore")
    if explored:
        lines.append(f"**Explored with tools** ({ui.md_text(explored.get('note', ''))}):")
        for step in explored.get("steps", ()):
            left = step.get("left", {})
            calls = "; ".join(f"`{c['tool']}({ui.md_text(_args(c['args']))})`" + (
                f" — {ui.md_text(c['error'])}" if c.get("error") else f" — {c.get('passages', 0)} passages")
                for c in step.get("calls", ()))
            lines.append(f"- round {step['round']}: {calls} · left: {left.get('rounds', 0)} rounds, "
                         f"{left.get('tool_calls', 0)} tool calls, {left.get('tokens', 0):,} tokens")
    return "\n\n".join(lines)


def _args(args) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}={str(v)[:60]!r}" for k, v in args.items())
    return str(args)[:80]


def claims_markdown(answer) -> str:
    """One line per verified claim of an AnswerResult, with a coloured verdict badge, then the computed
    confidence."""
    claims = answer.claims
    if not claims:
        return "_Verification was off or there was nothing to check._" + _confidence_line(answer, refusal=True)
    lines = []
    for claim in claims:
        marks = "".join(f"[{n}]" for n in claim.citations)
        reason = f" — _{ui.md_text(claim.reason)}_" if claim.reason else ""
        lines.append(f"- :{VERDICT_COLOUR.get(claim.verdict, 'gray')}-badge[{claim.verdict}] "
                     f"{ui.md_safe(claim.text)} {marks}{reason}".rstrip())
    return "\n".join(lines) + _confidence_line(answer)


# What the confidence was estimated from (agentic_rag.confidence.Evidence), in the reader's words.
EVIDENCE_WORDS = (("support", "claims that checked out"), ("fit", "of the question covered"),
                  ("cosine", "meaning match of the closest claim"), ("answered", "of the parts answered"))


def _confidence_line(answer, refusal: bool = False) -> str:
    features = answer.confidence_features
    if refusal and not features:
        return ""
    basis = answer.confidence_basis or "computed from the claims"
    line = f"\n\n**Confidence:** {answer.confidence:.0%} ({ui.md_text(basis)})"
    if features.get("refused"):
        shown = [f"best passage's match {float(features.get('retrieval', 0.0)):.0%}"]
        if features.get("found"):
            shown.append("an extract of the passages seems to answer it")
    else:
        shown = [f"{float(features[k]):.0%} {words}" for k, words in EVIDENCE_WORDS if k in features]
        if features.get("refuted"):
            shown.append("a check proved a claim wrong")
    return line + ("; from: " + ", ".join(shown) if shown else "")


def trace_rows(trace: Sequence[dict]) -> list[dict]:
    """The step table: step, what it did, seconds, LLM calls, tokens."""
    rows = []
    for entry in trace:
        tokens = int(entry.get("input_tokens", 0) or 0) + int(entry.get("output_tokens", 0) or 0)
        rows.append({"step": STEP_TITLES.get(entry.get("step", ""), entry.get("step", "?")),
                     "what happened": str(entry.get("summary", "")),
                     "seconds": round(float(entry.get("seconds", 0) or 0), 2),
                     "LLM calls": int(entry.get("llm_calls", 0) or 0), "tokens": tokens})
    return rows
