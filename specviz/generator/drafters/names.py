"""The drafters by name: what the pages call each, and which run DLoop's stages.

Names only, no models: the app's first page draws with these before the models (and the
transformers classes that load them) have been imported. specviz.generator.models says which
folder each embedded drafter loads from.

>>> DRAFTER_LABELS["dspark"], "dloop" in LOOPING, "dspark" + LOOP_SUFFIX
('DSpark (block + Markov head)', True, 'dspark-dloop')
"""

DRAFTER_LABELS = {"ar": "autoregressive (1-layer model)", "lookup": "prompt lookup (no model)",
                  "dflash": "DFlash (parallel block)", "dspark": "DSpark (block + Markov head)",
                  "dloop": "DLoop (DSpark stages, loop-aware training)",
                  "dloop-plain": "DLoop without loop-aware training"}
LOOPING = ("dloop", "dloop-plain")
LOOP_SUFFIX = "-dloop"   # a configured set offers each block drafter X also as X-dloop, run in DLoop's stages
