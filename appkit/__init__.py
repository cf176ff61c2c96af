"""The app layer between the pages and specviz: Streamlit plumbing shared by every page.

One job a module, in layers that import downward only:

    state       session keys and URL parameter names
    screen      numbering class screens, and drawing a lost one again (a Streamlit race)
    course      the pages in order, their stable ids, navigation
    engine_code the engine's code, imported once by one thread (transformers breaks when two do)
    runtime     the host's config, the shared model sets, the engine lock
    opening     the setting the home race opens on, measured once per server after the models load
    waiting     while the models load: a note, and a press kept until they arrive
    links       a page's settings in its address
    classroom   a class: lead, follow, share small results      votes   its questions and tally
    widgets     settings rows, sliders, labels, escaping       predict predict, then reveal
    frame       app.py's frame: sidebar, lesson header and end, the apology

A page imports `appkit` and calls what it needs from this list; the names below are the pages' API.

What it leaves out: lesson logic (specviz.lessons), drawing (specviz.viz), the engine (specviz.generator).
"""
from appkit.classroom import not_measured_here, run_here, share, shared, show_class
from appkit.course import CHECKS_AHEAD, DRAFT_VERIFY, HOME, LESSONS, bounds, current_page, page_of_file
from appkit.engine_code import wait_for_engine_code
from appkit.frame import apology, css, frame, header, next_lesson
from appkit.links import LessonSettings, cursor_params, from_params, read_cursor, set_link, to_params
from appkit.predict import forget_predictions, predict, prediction
from appkit.runtime import check, engine, limits, measure, models, new_tokens, remember, require_models, start_loading
from appkit.screen import fragment_run, hold, mark_seen, stop
from appkit.state import MODEL_SET, at_most, class_view, default, following, keys, leading, models_error, presenter, share_trace
from appkit.votes import class_result
from appkit.waiting import keep_press, loading_note, pressed
from appkit.widgets import (GPU_EDIT, VERIFIER_LABELS, block_slider, defaults, drafter_label, gpu_profile, html, plain, prompt_label,
                            result_caption, rounds_and_seed, run_row)
from specviz.viz.export import chart_config   # the pages' main charts

__all__ = ["CHECKS_AHEAD", "class_view", "leading", "share_trace", "DRAFT_VERIFY", "GPU_EDIT", "HOME", "MODEL_SET", "LESSONS", "apology", "at_most", "block_slider", "bounds", "defaults", "page_of_file", "LessonSettings", "cursor_params", "from_params", "read_cursor", "to_params", "VERIFIER_LABELS",
           "chart_config", "check", "class_result", "css", "current_page", "default", "drafter_label", "engine",
           "following", "forget_predictions", "fragment_run", "frame", "gpu_profile", "header", "hold", "html", "keep_press",
           "keys", "limits", "loading_note", "mark_seen", "measure", "models", "models_error", "new_tokens", "next_lesson", "not_measured_here", "plain", "predict",
           "prediction", "presenter", "pressed", "prompt_label", "remember", "require_models", "result_caption", "rounds_and_seed",
           "run_here", "run_row", "set_link", "share", "shared", "show_class", "stop", "wait_for_engine_code"]
