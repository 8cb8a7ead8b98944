"""Every exception Arbiter defines derives from ArbiterError (tests/test_error_tree.py walks arbiter/ and
verifiers/ and fails on one outside the tree). Expected outcomes (escalations, unreadable PDFs, a refused
model call) are results, not exceptions: most of these are caught inside their stage and become one.

ArbiterError
 ├── UserError                  the user (or their setup) caused it and can fix it: one line at the CLI, exit 2
 │    ├── ConfigError           bad profile, option or path
 │    │    ├── PreflightFailed      llm/preflight: the LLM check call failed before a run
 │    │    ├── ReaderError          reader/model: a reader file that cannot be used (missing, not the one
 │    │    │                        pinned, not a reader); during a run V2 is then ERRORED
 │    │    └── CorpusError          reader/corpus: a corpus folder that breaks corpus/FORMAT.md
 │    ├── InputError            an input the user named cannot be used at all (missing file, no PDFs found)
 │    └── RunLocked             run/lock: another run is writing to the same output folder
 ├── StoreError                 store/errors: a store operation refused (the CLI shows it in one line)
 │    ├── DatabaseUnavailable   (also a UserError) the database cannot be reached or is not migrated
 │    └── ClaimLost, TooManyClaims, UnknownPacket, UnknownUser, PermissionDenied, DuplicateUser,
 │         NotIndependent (the other half of a double review, or an audit, by the same reviewer),
 │         NotInOperations (an UnknownPacket: no such item waits in the operations lane),
 │         TooLarge (review notes, an answer or a draft over the profile's [limits]),
 │         KindNotAllowed (a packet of a kind of answer the reviewer is not restricted to)
 ├── ServiceError               a remote service gave no usable answer (arbiter/net and its callers)
 │    ├── NetworkDisabled       net/switch: a real request while the network is switched off (tests)
 │    ├── Retryable             net/retry: one failed attempt that may succeed again (never escapes)
 │    ├── LLMError              llm/port: every way a model call fails; the verifier is then ERRORED
 │    │    └── BudgetExhausted      a token budget ran out: the document escalates `budget_exhausted`
 │    └── DocumentAIError       ingest/documentai/client: no Document for a PDF; it becomes an IngestFailure
 ├── ExtractionError            a PDF could not be read into pages; caught in ingest, becomes an IngestFailure
 │    ├── UnusableFile          ingest/reader: empty, not a PDF, damaged or locked (local and Document AI)
 │    ├── OcrError              ingest/ocr: Tesseract failed on a page
 │    ├── DocumentAIFormatError (also a ValueError) a response that is not a Document, naming the field
 │    │    └── UnplacedTextError    the response's text is (almost) nowhere on its pages
 │    └── WorkerStartError      (also a RuntimeError) ingest/isolated: the extraction worker did not start
 ├── Deferred                   batch mode: the model's answer is queued, not in yet (the document waits)
 │    ├── ClassificationDeferred    classify/gemini
 │    └── PhaseDeferred             verifiers/llm_phase
 ├── ClassificationError        classify/base: no classification for a document
 ├── WorkerFault                run/worker: a check raised in an ingestion worker (an internal error)
 ├── PatchFailed                decide/autofix: a fix did not apply
 ├── ExportError                export/arrow: ground truth could not be written as asked
 ├── PathRefused                review/paths: a path outside the folders the review app may read
 └── RenderError                review/render: a page image could not be drawn

Private signals (`_WorkerLost`, `_SchemaRefused`, `_NotPlainJSON`...) sit under the node of their stage. The
CLI's `_Terminated` (SIGTERM) and run/batch's `RunInterrupted` (the interrupted run, with the summary of what it
did) are KeyboardInterrupts on purpose, outside the tree: `except Exception` must not catch them.
"""


class ArbiterError(Exception):
    """Base of every exception Arbiter defines."""


class UserError(ArbiterError):
    """An error the user (or their setup) caused and can fix; the CLI prints it in one line and exits 2."""


class ConfigError(UserError):
    """A profile, option or configured path is wrong."""


class InputError(UserError):
    """An input named by the user cannot be used."""


class ServiceError(ArbiterError):
    """A remote service (a model, Document AI) gave no usable answer, or could not be asked."""


class ExtractionError(ArbiterError):
    """A PDF could not be read into pages; ingestion turns it into an IngestFailure for that document."""


class Deferred(ArbiterError):
    """Batch mode: an answer is queued for a batch job and not in yet; the document waits, nothing failed."""
