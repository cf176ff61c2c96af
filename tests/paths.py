"""Where the repository is, for tests in any folder under tests/."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
