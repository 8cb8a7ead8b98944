"""Google Cloud Document AI as an extractor: a PDF becomes the same DocumentBundle local ingestion makes."""
