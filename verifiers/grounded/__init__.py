"""The grounded-answer kind's verifiers V1–V4 (issue 30.3): an answer composed from retrieved chunks, each
statement citing verbatim quotes, checked offline; with a language model, V4 also asks it whether each
statement's quotes entail it (entailment.py). Registered in arbiter/kinds; the list lives there."""
