"""A real S3 API on 127.0.0.1 for tests: moto's server (Apache-2.0) in a thread, reached by s3fs through
fsspec's own configuration variables, as a site would point Arbiter at its object storage."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

S3_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@contextmanager
def s3_server(bucket: str = "night") -> Iterator[str]:
    """Start the server, point fsspec's s3 protocol at it (environment variables, which child processes
    and Ray workers started afterwards inherit), make `bucket`; yields the endpoint URL. Everything is
    put back and the server stopped on exit."""
    import fsspec
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    # moto keeps its buckets in process-wide state: start from none.
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=10)
    env = {**S3_ENV, "FSSPEC_S3_ENDPOINT_URL": endpoint, "FSSPEC_S3_SKIP_INSTANCE_CACHE": "true"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    fsspec.config.set_conf_env(fsspec.config.conf)  # fsspec reads FSSPEC_* once at import: read them again
    try:
        fsspec.filesystem("s3", endpoint_url=endpoint, skip_instance_cache=True).mkdir(bucket)
        yield endpoint
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        fsspec.config.conf.pop("s3", None)
        server.stop()
