"""One reader per format, each a small function from a file's bytes to its blocks with their locations: PDF
(`pdf`, with its table pass `pdf_tables` and OCR for scanned pages `ocr`), Word (`docx`), PowerPoint (`pptx`),
spreadsheets and CSV (`sheets`), text and Markdown (`text`) and images (`image`). document_processor.parsing
picks the reader by file type."""
