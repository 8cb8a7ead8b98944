"""What a demo question is: its quotes and statements, or (unanswerable) its retrieved chunks and the
evidence an honest answer reports missing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    qid: str
    question: str
    quotes: tuple[tuple[str, str], ...] = ()  # (chunk_id, verbatim cut of its text)
    statements: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (text, positions of the quotes it cites)
    retrieved: tuple[str, ...] = ()  # unanswerable questions: the (irrelevant) chunks retrieved
    missing: tuple[str, ...] = ()  # unanswerable questions: what evidence is missing
    fabricated: str = ""  # unanswerable questions: a claim from memory, not from the chunks
    spanish: tuple[str, ...] = ()  # the statements in Spanish (for the language-mismatch fault)

    @property
    def answerable(self) -> bool:
        return bool(self.quotes)

    @property
    def conflict(self) -> bool:
        return any(chunk.startswith("P") for chunk, _ in self.quotes)


def one(qid: str, question: str, chunk: str, quote: str, statement: str, spanish: str = "") -> Spec:
    return Spec(qid, question, ((chunk, quote),), ((statement, (0,)),), spanish=(spanish,) if spanish else ())
