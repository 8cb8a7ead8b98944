"""The version of the data contracts (docs/design.md §3), named in one place.

Raise it when a contract changes shape: minor for an added optional field, major for anything a reader
of an older export or an older schema would misread (a removed or renamed field, a changed type or
meaning). Export manifests record it next to a hash of the GroundTruthRecord JSON Schema.
"""

from __future__ import annotations

CONTRACT_VERSION = "1.2"  # 1.1: semantic_checks on outcomes, packets and ground truth; 1.2: adjudication
# (packet kind ADJUDICATION, source SME_ADJUDICATED, the review's choice) and packet statuses OPERATIONS and
# DISMISSED (the operations lane of unreadable documents)
