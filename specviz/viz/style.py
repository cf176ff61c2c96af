"""One palette and one stylesheet for every page, plus the larger presenter-mode type.

Colours carry meaning across lessons: the target (p) is blue, the drafter (q) amber, accepted
tokens green, rejected red, corrections orange, bonus tokens violet, and the token the target
supplies itself under the stop rule blue (it equals the proposal: nothing was wrong).
"""
TARGET = "#2563eb"
DRAFTER = "#f59e0b"
ACCEPTED = "#16a34a"
REJECTED = "#dc2626"
CORRECTION = "#ea580c"
BONUS = "#7c3aed"
MUTED = "#94a3b8"
INK = "#0f172a"
TEXT = "#31333f"   # Streamlit's body text

CSS = f"""
.sv-text {{ font-size: 1.25rem; line-height: 2.1; }}
.sv-prompt {{ color: #475569; }}
.sv-chip {{ display: inline-block; padding: 0.05em 0.4em; margin: 0.1em 0.12em; border-radius: 0.4em;
  border: 2px solid {MUTED}; background: #f8fafc; font-family: ui-monospace, monospace; white-space: pre;
  line-height: 1.5; }}
.sv-chip small {{ font-family: sans-serif; color: #475569; margin-left: 0.3em; }}
.sv-proposal {{ border-color: {DRAFTER}; background: #fffbeb; }}
.sv-accepted {{ border-color: {ACCEPTED}; background: #f0fdf4; }}
.sv-rejected {{ border-color: {REJECTED}; background: #fef2f2; text-decoration: line-through; }}
.sv-discarded {{ border-color: #cbd5e1; color: #94a3b8; background: #f8fafc; text-decoration: line-through; }}
.sv-correction {{ border-color: {CORRECTION}; background: #fff7ed; font-weight: 600; }}
.sv-bonus {{ border-color: {BONUS}; background: #f5f3ff; font-weight: 600; }}
.sv-stop {{ border-color: {TARGET}; background: #eff6ff; font-weight: 600; }}
.sv-new {{ box-shadow: inset 0 -0.2em 0 #f59e0b; }}   /* inside its own box: a neighbour's comma stays visible */
.sv-gen-accepted {{ background: #dcfce7; border-radius: 0.25em; }}
.sv-gen-correction {{ background: #ffedd5; border-radius: 0.25em; }}
.sv-gen-bonus {{ background: #ede9fe; border-radius: 0.25em; }}
.sv-gen-stop {{ background: #dbeafe; border-radius: 0.25em; }}
.sv-mark {{ font-weight: 700; margin-left: 0.2em; }}
.sv-mark.ok {{ color: {ACCEPTED}; }} .sv-mark.no {{ color: {REJECTED}; }}
table.sv-table {{ border-collapse: collapse; width: 100%; font-size: 0.95rem; }}
table.sv-table th, table.sv-table td {{ border-bottom: 1px solid #e2e8f0; padding: 0.35em 0.5em;
  text-align: left; vertical-align: top; }}
table.sv-table th {{ color: #475569; font-weight: 600; }}
table.sv-table td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.sv-p {{ color: {TARGET}; font-weight: 600; }} .sv-q {{ color: #b45309; font-weight: 600; }}
.sv-strip {{ display: flex; flex-wrap: wrap; gap: 3px; align-items: stretch; }}
.sv-cell {{ min-width: 2.2em; padding: 0.2em 0.35em; border-radius: 0.3em; font-family: ui-monospace, monospace;
  white-space: pre; font-size: 0.9rem; text-align: center; border: 2px solid transparent; }}
.sv-cell.processed {{ background: #dbeafe; border-color: #93c5fd; }}
.sv-cell.pending {{ background: #fef9c3; border: 2px dashed #ca8a04; }}
.sv-cell.speculative {{ background: #fffbeb; border: 2px dashed {DRAFTER}; }}
.sv-cell.drafted {{ background: #fff; border: 2px dotted {DRAFTER}; color: #92400e; }}
.sv-cell.discarded {{ background: #f1f5f9; color: #94a3b8; text-decoration: line-through; }}
.sv-cell.elided {{ color: #64748b; }}
.sv-legend {{ font-size: 0.85rem; color: #475569; margin-top: 0.4em; }}
.sv-legend span.sv-cell {{ display: inline-block; min-width: 1em; margin: 0 0.3em 0 0.8em; }}
.sv-phase {{ display: inline-block; padding: 0.15em 0.7em; border-radius: 1em; margin-right: 0.4em;
  background: #e2e8f0; color: #475569; font-weight: 600; }}
.sv-phase.on {{ background: {TARGET}; color: white; }}
.sv-big {{ font-size: 2.4rem; font-weight: 700; color: {INK}; }}
.sv-race {{ font-size: 1.15rem; line-height: 1.9; min-height: 6em; padding: 0.6em 0.8em; border-radius: 0.6em;
  background: #f8fafc; border: 1px solid #e2e8f0; }}
"""

# A caption that carries a result (appkit.result_caption puts it in a container keyed result_<name>) is
# read at body size, in the text's colour: a grey caption was too small for a projector's back row.
RESULT = '[data-testid="stMain"] [class*="st-key-result_"] [data-testid="stCaptionContainer"]'
RESULT_CSS = f"""
{RESULT}, {RESULT} p {{ font-size: 1rem !important; color: {TEXT} !important; }}
"""

# Buttons that fit where they are: no shortcut hint (the pages name the keys in their text), and a
# label that wraps at its spaces rather than being cut.
FIT_BUTTONS = """
[data-testid="stMain"] button kbd { display: none; }
[data-testid="stMain"] button { height: auto !important; }
[data-testid="stMain"] button p { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; overflow-wrap: normal !important; word-break: normal !important; }
"""

# The page's own layout, not the figures' (specviz.viz.export draws figures from CSS alone): a row of
# buttons in a narrow main area (a laptop at 1024 pixels with the sidebar open) fits its buttons.
LAYOUT_CSS = """
[data-testid="stMain"] [data-testid="stColumn"] { container-type: inline-size; }
@container (max-width: 8.5rem) {""" + FIT_BUTTONS + "}\n"

# Large type for the room, in the main area, fitted to a projector's 1024 or 1280 pixels. The sidebar
# starts collapsed (appkit.frame); when opened it is the presenter's panel: its type grows with the
# root size only, and a lesson name too long for its width wraps instead of being cut.
# Nothing may reach past the right edge: columns too narrow for the large type wrap onto the next
# row, labels wrap at spaces (never inside a word), and a figure or table wider than the page
# scrolls inside its own box. Button labels keep the root size and lose their shortcut hints (the
# pages name the keys); a metric's value stays larger than its label. A "Predict:" question (its radio's
# key starts keep_predict_, appkit.predict) is as large as the body text around it: it is what the room reads,
# and so is a caption that carries a result (RESULT_CSS). A row of tabs wraps rather than cutting a title.
PRESENTER_CSS = """
html, body, [data-testid="stAppViewContainer"] { font-size: 21px; }
[data-testid="stMainBlockContainer"] { padding: 3rem 1.2rem 3rem !important; max-width: 100% !important; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.3rem; }
[data-testid="stSidebarNav"] a span, [data-testid="stSidebarNav"] .stMarkdownEllipsis,
[data-testid="stSidebarNav"] p { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; line-height: 1.3 !important; }
[data-testid="stSidebarNav"] a { height: auto !important; }
[data-testid="stMain"] [data-testid="stHorizontalBlock"] { flex-wrap: wrap !important; }
[data-testid="stMain"] [data-testid="stColumn"] { min-width: min(100%, 11rem) !important; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1rem !important; }
[data-testid="stMain"] [class*="st-key-keep_predict_"] [data-testid="stWidgetLabel"] p { font-size: 1.3rem !important; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] *,
[data-testid="stMain"] [data-testid="stMetricLabel"] *, [data-testid="stMain"] [data-testid="stMetricValue"] * {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  word-break: normal !important; overflow-wrap: normal !important; }
[data-testid="stMain"] button [data-testid="stMarkdownContainer"] p { font-size: 1rem; }
[data-testid="stMain"] [data-testid="stMetricLabel"] p { font-size: 0.9rem !important; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 1.8rem !important; height: auto !important; }
[data-testid="stMain"] [data-testid="stMetricValue"] * { line-height: 1.2 !important; font-size: 1.8rem !important; }
[data-testid="stMain"] [data-testid="stHtml"], [data-testid="stMain"] [data-testid="stTable"],
[data-testid="stMain"] [data-testid="stMarkdownContainer"] { max-width: 100%; overflow-x: auto; }
[data-testid="stMain"] [data-testid="stTable"] td, [data-testid="stMain"] [data-testid="stTable"] th {
  white-space: normal !important; }
h1 { font-size: 2.4rem !important; } h2 { font-size: 1.9rem !important; } h3 { font-size: 1.5rem !important; }
[data-testid="stMain"] [class*="st-key-result_"] [data-testid="stCaptionContainer"],
[data-testid="stMain"] [class*="st-key-result_"] [data-testid="stCaptionContainer"] p { font-size: 1.3rem !important; }
[data-testid="stMain"] [data-testid="stTabs"] :has(> [data-testid="stTab"]) { flex-wrap: wrap !important;
  overflow: visible !important; }
[data-testid="stMain"] [data-testid="stTab"] { height: auto !important; max-width: 100% !important; flex-shrink: 1 !important; }
[data-testid="stMain"] [data-testid="stTab"] * { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; }
.sv-text { font-size: 1.7rem; } .sv-chip { font-size: 1.3rem; } table.sv-table { font-size: 1.1rem; }
.sv-cell { font-size: 1.15rem; } .sv-race { font-size: 1.5rem; }
""" + FIT_BUTTONS


def stylesheet(presenter: bool) -> str:
    """The <style> block for a page: always the base sheet, plus large type for presenting.

    >>> "font-size: 21px" in stylesheet(True), "font-size: 21px" in stylesheet(False)
    (True, False)
    """
    return "<style>" + CSS + RESULT_CSS + LAYOUT_CSS + (PRESENTER_CSS if presenter else "") + "</style>"
