"""One lane of the home page's race: a runner's text so far and its measured ms per token."""
from specviz.viz.tokens import esc


def lane_html(name: str, texts: list[tuple[str, str]], ms_per_token: float | None, done: bool, plain: bool) -> str:
    """Tokens coloured by kind (plain decoding: uncoloured), with a live ms/token readout.

    >>> lane_html("plain", [("<i>", "bonus")], 12.5, True, plain=True).count("&lt;i&gt;")
    1
    """
    spans = "".join(esc(t, visible_space=False) if plain else
                    f'<span class="sv-gen-{kind}">{esc(t, visible_space=False)}</span>' for t, kind in texts)
    speed = f"{ms_per_token:.1f} ms/token" if ms_per_token else "…"
    flag = " ✓ finished" if done else ""
    return (f'<div style="margin-bottom:0.6em"><b>{esc(name, visible_space=False)}</b> · {len(texts)} tokens · '
            f'<span class="sv-p">{speed}</span>{flag}<div class="sv-race">{spans}</div></div>')
