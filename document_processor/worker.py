"""Imported once by the fork server: every reader library and the tokenizer, ready for each child to inherit."""

from document_processor import isolation, model_files, parsing  # noqa: F401  (importing is the point)

model_files.tokenizer()
