"""The grounded-answer kind's verifiers V1–V4 (issue 30.3): an answer composed from retrieved chunks, each
statement citing verbatim quotes, checked offline. Registered in arbiter/kinds; the list lives there."""
