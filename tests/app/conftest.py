"""A host whose runs are short, for AppTests that read what a live measurement draws, not how long
it ran."""
import pytest

SHORT = 8   # new tokens a run may ask for on the short host; the pages ask for 12 to 64


@pytest.fixture
def short_runs(tmp_path, monkeypatch) -> int:
    """The app on a host whose config limits a run to SHORT new tokens: every page's run length is
    cut to that limit (appkit.runtime.new_tokens), so a page that measures on the embedded models
    draws what it draws at its own length in a fraction of the time. The set is the embedded one,
    so the models already loaded for this test process are used. Returns SHORT."""
    path = tmp_path / "specviz.toml"
    path.write_text(f"[limits]\nmax_new_tokens = {SHORT}\n[sets.embedded]\nembedded = true\n")
    monkeypatch.setenv("SPECVIZ_CONFIG", str(path))
    return SHORT


@pytest.fixture
def unloaded_set(tmp_path, monkeypatch):
    """A host config whose only set this process has never loaded (a fresh name for the shipped models)."""
    name = f"first_{tmp_path.name}".replace("-", "_")
    path = tmp_path / "specviz.toml"
    path.write_text(f"[sets.{name}]\nembedded = true\nlabel = \"The shipped models, not loaded yet\"\n")
    monkeypatch.setenv("SPECVIZ_CONFIG", str(path))
    return name
