"""Support for the tests and the benchmarks: bulk seeding of the review store with data on the contracts.

Not shipped: pyproject's packages.find includes only arbiter*, verifiers* and review_app*."""
