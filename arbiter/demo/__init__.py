"""The demo's synthetic documents, made by committed, deterministic code (no real patient data).

`corpus.build_corpus` renders every PDF with its correct classification and defect variants;
`corpus.write_demo_inputs` writes what `arbiter demo` verifies (PDFs, the demo's classifications, the
production answers, damaged files) on first use, so an installed Arbiter needs no checkout.
`fixtures/generate.py` writes the same files, and the ones only tests use, into `fixtures/`.
`llm_replays/` holds the sample model answers the `replay` backend reads by default
(arbiter.llm.config.SAMPLE_REPLAYS), written by `fixtures/llm_samples.py`.
"""
