"""Rule-based question analysis: type, concepts, follow-up rewriting and decomposition (no model needed)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentic_rag.language.text import CITATION, QUERY_WORDS, STOPWORDS, detect_language, terms, words
from agentic_rag.types import Analysis, Plan

MAX_SUB_QUESTIONS = 4
HISTORY_TURNS = 3
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
             "fifth": 5, "5th": 5, "last": -1}
_ORDINAL_WORDS = "|".join(_ORDINALS)
_NEGATION = re.compile(
    r"\b(?:do|does|did)\s*(?:not|n't)\s+(?:mention|discuss|contain|cover|include|refer to|talk about|say anything"
    r" about)\s+(?P<x>.+?)\s*\??$|\b(?:never|not|without)\s+(?:mentioning|mentions?|discussing|covering|containing)"
    r"\s+(?P<y>.+?)\s*\??$", re.IGNORECASE)
_EXHAUSTIVE = re.compile(
    r"\b(?:which|what|all|every|each|list)\b.*\b(?:documents?|files?|reports?|papers?)\b.*?\b(?:mentions?|discuss(?:es)?"
    r"|contains?|covers?|includes?|refers? to|talks? about)\s+(?P<x>.+?)\s*\??$", re.IGNORECASE)
_COMPARISON = re.compile(r"\b(?:compare[sd]?|comparison|versus|vs\.?|differences?|differ|compared (?:to|with)"
                         r"|better|worse|higher|lower|more than|less than|from .+? to)\b", re.IGNORECASE)
# how the answer is to be said, after the last side of a change: "..., in percent", "in millions of dollars"
_ANSWER_FORM = re.compile(r",?\s*(?:in|as an?)\s+(?:percent(?:age)?s?|%|(?:us\s*)?(?:\$\s*)?(?:millions|billions|"
                          r"thousands)(?:\s+of\s+(?:us\s+)?dollars)?|(?:us\s+)?dollars|usd)\s*\??$", re.I)
# "How did net income change from fiscal 2022 to fiscal 2023?": the same thing at two times (or places).
_CHANGE = re.compile(r"^(?:(?:by\s+)?(?:how(?:\s+much)?|what\s+(?:percentage|percent|amount|rate|share))\s+"
                     r"(?:did|does|has|have|do|was|were|is|are)\s+)?(?:the\s+)?(?P<aspect>.+?)\s+"
                     r"(?:change[sd]?|grow|grew|rise|rose|fall|fell|increase[sd]?|decrease[sd]?|decline[sd]?|develop"
                     r"(?:ed)?|evolve[sd]?|move[sd]?|moved|go|went|shift(?:ed)?)\s+(?:from|between)\s+(?P<a>.+?)\s+"
                     r"(?:to|and)\s+(?P<b>[^?]+?)\s*\??$", re.IGNORECASE)
_NUMERIC = re.compile(r"\b(?:how (?:many|much|long|old|often)|number of|percentage|percent|ratio|rate|total|"
                      r"average|amount|cost|price|revenue|sum)\b|%", re.IGNORECASE)
_LIST = re.compile(r"^(?:list|name|enumerate)\b|\b(?:what|which) (?:are|were) the\b|\ball (?:the )?\w+s\b",
                   re.IGNORECASE)
_SUMMARY = re.compile(r"\b(?:summari[sz]e|summary|overview|main points|key points|gist|tl;?dr|what is .{0,40}"
                      r"(?:document|report|paper|file|book|article|deck|presentation|slides|spreadsheet|workbook|"
                      r"memo|letter|contract|manual|thesis|\.(?:pdf|docx?|pptx?|xlsx?|xlsm|csv|txt|md)) about)\b",
                      re.IGNORECASE)
_FOLLOW_START = re.compile(r"^\s*(?:and|also|what about|how about|same for|and what about|and for|or)\b",
                           re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:it|its|they|them|their|this|that|those|these|he|she|him|her|the (?:" + _ORDINAL_WORDS
                      + r") one)\b", re.IGNORECASE)
_COMPARE_PATTERNS = (
    re.compile(r"\bbetween (?P<a>.+?) and (?P<b>.+?)\s*(?:\?|$)", re.IGNORECASE),
    re.compile(r"\bcompare (?:the )?(?:(?P<aspect>[^?]+?) (?:of|for|in) )?(?P<a>.+?) (?:and|with|to|against) "
               r"(?P<b>.+?)\s*(?:\?|$)", re.IGNORECASE),
    re.compile(r"^(?:how|in what way) (?:does|do|did) (?P<a>.+?) (?:compare|differ) (?:to|from|with|against) "
               r"(?P<b>.+?)\s*(?:\?|$)", re.IGNORECASE),
    re.compile(r"(?P<a>[^?,:;]+?) (?:vs\.?|versus|compared (?:to|with)) (?P<b>[^?,:;]+?)\s*(?:[?:;,]|$)", re.IGNORECASE),
)
_SPLIT_CONJUNCTION = re.compile(r"\s*(?:;|,?\s+and\s+(?=(?:(?:on|in|at|by|for|from|to|with|during|under|after|"
                                r"before)\s+)?(?:what|who|when|where|which|why|how|is|are|does|did|do|was|were|can)\b))"
                                r"\s*", re.IGNORECASE)


_INSTRUCTION = re.compile(r"^(?:please\s+)?(?:give|round|answer|base|provide|use|using|respond|address|assume|"
                          r"express|calculate|compute|show|state|report|keep|format|return|note|consider|ignore|do "
                          r"not|don't|be|make sure|include|exclude|focus|rely|refer|limit|list your|explain your)\b",
                          re.IGNORECASE)
# "How many layers do A and B each have?": one question about two things, asked of each.
_EACH = re.compile(r"^(?P<pre>.*?\b(?:do|does|did|are|were|is|was|have|has|had))\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+"
                   r"(?:each|both|respectively)\b\s*(?P<post>[^?]*)\??$", re.IGNORECASE)
# "... when training A and when pre-training B": the second part repeats the lead word and borrows the rest.
_LEAD = re.compile(r"^(when|while|during|after|before|for|in|on|at|with)\b", re.IGNORECASE)
_AUX = r"(?:is|are|was|were|do|does|did|has|have|had|can|will)"
_AUX_TAIL = re.compile(r"\b" + _AUX + r"\s+\S.*$", re.IGNORECASE)
# "How many layers, what hidden size" before "and how many heads does X have": asks without a verb of their own.
_BARE_ASKS = re.compile(r"^(?:(?:how (?:many|much)|what|which)\s+(?!" + _AUX + r"\b)\w+(?:\s+\w+){0,2}"
                        r"(?:\s*,\s*|\s+and\s+|$))+$", re.IGNORECASE)


def plan_question(question: str, history: Sequence[tuple[str, str]] = ()) -> Plan:
    """Analyse and decompose a question with rules only: the offline twin of the Gemini plan call."""
    analysis = analyze_question(question, history)
    return Plan(analysis, decompose(analysis))


def analyze_question(question: str, history: Sequence[tuple[str, str]] = ()) -> Analysis:
    """Type, complexity, key concepts and language of `question`; follow-ups rewritten from the last turns."""
    question = " ".join(question.split())
    standalone = resolve_follow_up(question, history[-HISTORY_TURNS:]) if history else None
    text = standalone or question
    qtype = classify(text)
    target = negation_target(text)
    concepts = (target,) if target else key_concepts(text)
    complex_ = qtype in ("comparison", "summary", "negation", "exhaustive") or len(_questions_in(text)) > 1
    intent = f"{qtype} question about " + (", ".join(concepts[:4]) or "the documents")
    return Analysis(standalone=text, intent=intent, complexity="complex" if complex_ else "simple",
                    question_type=qtype, key_concepts=concepts, language=detect_language(question),
                    follow_up=standalone is not None, source="rules")


def classify(question: str) -> str:
    """One of QUESTION_TYPES (never 'follow-up': a rewritten follow-up has the type of what it asks)."""
    if _NEGATION.search(question):
        return "negation"
    if _EXHAUSTIVE.search(question):
        return "exhaustive"
    if _SUMMARY.search(question):
        return "summary"
    if _CHANGE.search(question) or (_COMPARISON.search(question)
                                     and any(p.search(question) for p in _COMPARE_PATTERNS)):
        return "comparison"
    if _LIST.search(question):
        return "list"
    if _NUMERIC.search(question):
        return "numeric"
    return "fact"


def negation_target(question: str) -> str | None:
    """X in 'which documents don't mention X' / 'which files discuss X'; None for other questions."""
    m = _NEGATION.search(question) or _EXHAUSTIVE.search(question)
    if not m:
        return None
    x = next(g for g in m.groups() if g)
    return re.sub(r"^(?:the|a|an|any)\s+|[\"'“”]", "", x.strip(" ?.")).strip() or None


def key_concepts(question: str) -> tuple[str, ...]:
    """Quoted phrases, capitalised names and numbers first, then the remaining content words."""
    found: list[str] = re.findall(r"[\"“]([^\"”]{2,60})[\"”]|(?<!\w)'([^']{2,60})'(?!\w)", question)
    found = [a or b for a, b in found]
    names = re.findall(r"(?<!^)(?<![.?!]\s)\b([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)", question)
    found += [n for n in names if n.lower() not in STOPWORDS]
    found += re.findall(r"\b\d[\d,.]*%?", question)
    lowered = {f.lower() for f in found}
    for w in words(question):
        if w in QUERY_WORDS or w in STOPWORDS or len(w) <= 2:
            continue
        if w not in lowered and not any(w in f for f in lowered):
            found.append(w)
            lowered.add(w)
    return tuple(dict.fromkeys(f.strip() for f in found if f.strip()))[:8]


def resolve_follow_up(question: str, history: Sequence[tuple[str, str]]) -> str | None:
    """A standalone rewrite of a follow-up ('and the second one?') from the last exchanges; None if not one."""
    if not history or not _is_follow_up(question):
        return None
    prev_q, prev_a = history[-1]
    rest = _FOLLOW_START.sub("", question).strip(" ?.,")
    ordinal = re.search(r"\b(" + _ORDINAL_WORDS + r")\b", question, re.IGNORECASE)
    if ordinal:
        rewritten = _swap_ordinal(prev_q, ordinal.group(1).lower())
        if rewritten:
            return rewritten
        item = _list_item(prev_a, _ORDINALS[ordinal.group(1).lower()])
        if item:
            return f"What about {item}?"
    year = re.search(r"\b(1[89]\d\d|20\d\d)\b", rest)
    if year and re.search(r"\b(1[89]\d\d|20\d\d)\b", prev_q):
        return re.sub(r"\b(1[89]\d\d|20\d\d)\b", year.group(1), prev_q, count=1)
    names = re.findall(r"(?<!^)\b[A-Z][\w&-]*(?:\s+[A-Z][\w&-]*)*", prev_q)
    subject = names[0] if names else ""
    if rest and _name_like(rest) and len(rest.split()) <= 4 and subject:
        return prev_q.replace(subject, rest, 1)  # "and Globex?": the same question of another name
    sibling = _sibling_swap(prev_q, rest)
    if sibling:
        return sibling
    pronoun = _PRONOUN.search(rest)
    if pronoun and subject and pronoun.group(0).lower() in _SUBJECT_PRONOUNS and len(terms(rest)) >= 2:
        # "Compare it with BERT": a request of its own about the previous subject, which replaces the pronoun
        said = rest[:pronoun.start()] + subject + rest[pronoun.end():]
        return said[:1].upper() + said[1:] + ("?" if question.rstrip().endswith("?") else "")
    return f"{prev_q.rstrip(' ?')} — {rest}?" if rest else prev_q


_SUBJECT_PRONOUNS = frozenset({"it", "this", "that", "they", "them", "he", "she", "him", "her"})


def _sibling_swap(prev_question: str, rest: str) -> str | None:
    """"And the decoder?" after "How many layers does the Transformer encoder have?": the one word of the previous
    question that shares a stem ending of 4+ letters with the new term (encoder/decoder, maximum/minimum,
    upstream/downstream) is swapped for it; None when there is not exactly one."""
    m = re.fullmatch(r"(?:the\s+|its\s+|their\s+)?([a-z][a-z-]{4,})", rest.strip(), re.IGNORECASE)
    if not m:
        return None
    new = m.group(1)
    found = [w for w in set(re.findall(r"[A-Za-z][A-Za-z-]{4,}", prev_question))
             if not w.lower().endswith(new.lower()) and _shared_ending(w.lower(), new.lower()) >= 4]
    if len(found) != 1:
        return None
    return re.sub(rf"\b{re.escape(found[0])}\b", new, prev_question, count=1)


def _shared_ending(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _name_like(text: str) -> bool:
    """'Globex', 'BERT-Large', 'New York 2': every word a capitalised name or a number (not 'Compare it with X')."""
    return all(w[:1].isupper() or w[:1].isdigit() for w in text.split())


def decompose(analysis: Analysis) -> tuple[str, ...]:
    """1-4 focused sub-questions: comparison sides, several questions in one, or the question itself."""
    q = analysis.standalone
    if analysis.checks_every_document:
        return (analysis.key_concepts[0] if analysis.key_concepts else q,)
    subs: list[str] = []
    if analysis.question_type == "comparison":
        subs = _comparison_sides(q)
    if not subs:
        subs = _each_side(q) or _questions_in(q)
    return tuple(dict.fromkeys(s for s in subs if terms(s)))[:MAX_SUB_QUESTIONS] or (q,)


def _is_follow_up(question: str) -> bool:
    content = terms(question, drop_query_words=True)
    if _FOLLOW_START.match(question) and len(content) <= 5:
        return True
    return bool(_PRONOUN.search(question)) and len(content) <= 2


def _swap_ordinal(prev_question: str, ordinal: str) -> str | None:
    m = re.search(r"\b(" + _ORDINAL_WORDS + r")\b", prev_question, re.IGNORECASE)
    if not m:
        return None
    return prev_question[: m.start()] + ordinal + prev_question[m.end():]


def _list_item(answer: str, n: int) -> str | None:
    """Item n (1-based, -1 = last) of the first list in an answer: numbered/bulleted lines or 'A, B and C'."""
    text = CITATION.sub("", answer)
    lines = [m.group(1) for m in re.finditer(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$", text, re.MULTILINE)]
    items = lines or _inline_list(text)
    items = [i.strip(" \"“”'*.:;") for i in items if i.strip(" \"“”'*.:;")]
    if not items or n > len(items):
        return None
    return items[n - 1] if n > 0 else items[-1]


def _inline_list(text: str) -> list[str]:
    m = re.search(r"([^.:;!?]*?,[^.;!?]*?\b(?:and|or)\b[^.;!?\n]+)", text)
    if not m:
        return []
    body = re.split(r"\b(?:are|is|were|was|include[sd]?|including|namely)\b|:", m.group(1))[-1]
    return [p.strip() for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", body) if p.strip()]


def _questions_in(question: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"(?<=\?)\s+", question) if p.strip()]
    asked = [p for p in parts if not _INSTRUCTION.match(p) or p.endswith("?")]
    # "Round your answer to two decimals.": how to answer, not something to look up (kept when all there is).
    parts = asked or parts
    out = []
    for part in parts:
        pieces = _share_clauses([p.strip(" ,") for p in _SPLIT_CONJUNCTION.split(part) if p.strip(" ,")])
        out.extend(_name_referents(pieces))
    return [p if p.endswith("?") or len(out) == 1 else p + "?" for p in out]


_REFERENT = re.compile(r"\b(?:it|its|they|them|their|this|these|those)\b", re.IGNORECASE)


def _name_referents(pieces: list[str]) -> list[str]:
    """A piece that refers back ("... and on what date will it be paid?") names what it refers to, so its own
    search finds the same thing: "on what date will it be paid (Amcor quarterly dividend)?"."""
    out = list(pieces)
    for i in range(1, len(out)):
        if _REFERENT.search(out[i]):
            # Not its numbers and years: "... in 2006, and what is it in 2007?" asks about 2007 only.
            named = [c for c in key_concepts(out[i - 1])
                     if c.lower() not in out[i].lower() and not re.search(r"\d", c)][:4]
            if named:
                out[i] = f"{out[i].rstrip(' ?')} ({' '.join(named)})?"
    return out


def _share_clauses(pieces: list[str]) -> list[str]:
    """Pieces of one question made whole: a trailing 'when B' borrows what came before the first 'when', and
    verbless asks ('how many layers, what hidden size') borrow the verb and subject of the last piece."""
    out = list(pieces)
    for i in range(1, len(out)):
        lead = _LEAD.match(out[i])
        at = out[i - 1].lower().rfind(f" {lead.group(1).lower()} ") if lead else -1
        if at > 0:
            out[i] = f"{out[i - 1][:at]} {out[i]}"
    tail = _AUX_TAIL.search(out[-1]) if len(out) > 1 else None
    if tail:
        out = [f"{p.rstrip(' ?,')} {tail.group(0)}" if i < len(out) - 1 and _BARE_ASKS.match(p.rstrip(" ?"))
               else p for i, p in enumerate(out)]
    return out


def _each_side(question: str) -> list[str]:
    """'How many layers do A and B each have?' -> the same question about A, then about B; [] otherwise."""
    m = _EACH.match(question.strip())
    if not m:
        return []
    post = f" {m.group('post').strip()}" if m.group("post").strip() else ""
    return [f"{m.group('pre')} {side.strip()}{post}?" for side in (m.group("a"), m.group("b"))]


def _comparison_sides(question: str) -> list[str]:
    change = _CHANGE.search(question)
    if change:
        aspect = change.group("aspect").strip()
        return [f"{aspect} in {_ANSWER_FORM.sub('', side).strip(' ?,')}" for side in (change.group("a"), change.group("b"))]
    for pattern in _COMPARE_PATTERNS:
        m = pattern.search(question)
        if not m:
            continue
        a, b = (m.group("a").strip(" ?,"), m.group("b").strip(" ?,"))
        aspect = (m.groupdict().get("aspect") or "").strip()
        used = set(words(a)) | set(words(b)) | set(words(aspect))
        extra = [w for w in words(question[: m.start()] + " " + question[m.end():])
                 if w not in STOPWORDS and w not in used and not _COMPARISON.fullmatch(w)]
        tail = " ".join(filter(None, [aspect, *extra]))
        a, b = _share_aspect(a, b), _share_aspect(b, a)
        return [f"{side} {tail}".strip() for side in (a, b)]
    return []


def _share_aspect(side: str, other: str) -> str:
    """A bare side borrows what the other side asks about:
    'Globex's' with 'Acme's revenue growth' -> "Globex's revenue growth";
    '2021' with "3M's net sales in 2022" -> "3M's net sales in 2021" (a period takes the other's period's place);
    "Australia's" with 'the US graduation rate in 2005' -> 'the Australia graduation rate in 2005'."""
    period = _PERIOD.fullmatch(side.strip())
    if period:
        found = list(_PERIOD.finditer(other))
        if found:
            return other[:found[-1].start()] + side.strip() + other[found[-1].end():]
        return f"{other} in {side.strip()}" if other else side
    if not re.fullmatch(r"[A-Z][\w&.'’-]*(?:\s+[A-Z][\w&.'’-]*)*", side):
        return side
    m = re.fullmatch(r"[A-Z][\w&.'’-]*(?:\s+[A-Z][\w&.'’-]*)*\s+(?P<aspect>[a-z][^?]*)", other)
    if m:
        return f"{side} {m.group('aspect')}"
    name = re.search(r"(?<!^)\b[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*", other)
    if name and not _PERIOD.fullmatch(name.group(0)):
        bare = re.sub(r"['’]s$", "", side)
        return other[:name.start()] + bare + other[name.end():]
    return side


_PERIOD = re.compile(r"(?:(?:fiscal|fy|calendar|the)\s*(?:year\s+)?)?(?:q[1-4]\s*|h[12]\s*)?(?:19|20)\d\d\b",
                     re.IGNORECASE)
