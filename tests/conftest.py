"""Shared fixtures: the embedded model set, loaded once per test session."""
import pytest

from specviz.generator.models import load_embedded


@pytest.fixture(scope="session")
def models():
    return load_embedded()
