"""The outside world's seams, shared by every caller of a remote service (arbiter/llm, ingest/documentai).

- `switch`: the one network switch; every real request checks it first, and tests turn it off;
- `limiter`: a requests-per-minute limiter shared by every caller of one service, paused by a 429;
- `retry`: the transport retry policy (attempts, exponential backoff with jitter, the server's delay);
- `google`: reading Google API error bodies (status, message, RetryInfo delay, API_KEY_INVALID).

Nothing here knows what is being sent: callers turn failures into their own errors (LLMError,
DocumentAIError) with plain reasons.
"""
