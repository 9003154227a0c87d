"""Shared test setup: ``tests/`` on ``sys.path``, both anyio backends, hypothesis profiles.

Invariant: the default run draws the reduced example counts of ``budget.examples``; the ``long``
hypothesis profile (``HYPOTHESIS_PROFILE=long`` or ``--hypothesis-profile=long``) draws the full ones.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

import budget  # noqa: E402

# Tests state their own counts (see budget.py); the profile is the switch, with hypothesis' defaults.
settings.register_profile(budget.LONG_PROFILE)
if os.environ.get("HYPOTHESIS_PROFILE") == budget.LONG_PROFILE:
    settings.load_profile(budget.LONG_PROFILE)


def pytest_configure(config: pytest.Config) -> None:
    # Runs before collection, where the test modules call budget.examples() in their decorators.
    if config.getoption("hypothesis_profile", None) == budget.LONG_PROFILE:
        budget.long_run = True


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Async tests (``@pytest.mark.anyio``) run on both anyio backends."""
    return request.param
