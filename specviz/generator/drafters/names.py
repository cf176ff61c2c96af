"""The drafters by name, declared once: what a page calls each, where the embedded set keeps its
weights, whether it runs DLoop's stages, which recipe stage trains it, and which model sets offer it.

Everything else that lists drafters derives from DRAFTERS: the labels the pages show, the folders
the embedded set loads (specviz.generator.models), the names a host may not give its own drafters
and the drafters every configured set gets (specviz.hosting), the command line's help, and the
folders the recipe's cards measure (specviz.training.stages). Registering a drafter is one line
here, plus the code that drafts with it or trains it.

Names only, no models: the app's first page draws with these before the models (and the
transformers classes that load them) have been imported.

>>> DRAFTER_LABELS["dspark"], "dloop" in LOOPING, "dspark" + LOOP_SUFFIX
('DSpark (block + Markov head)', True, 'dspark-dloop')
>>> EMBEDDED_FOLDERS["dloop-plain"], EVERY_SET
('drafter-dspark', ('lookup',))
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class DrafterName:
    """One drafter a model set can offer.

    >>> DrafterName("lookup", "prompt lookup (no model)", None, every_set=True).looping
    False
    """
    name: str                      # what the engine, the URL and the command line call it
    label: str                     # what a page shows a learner
    folder: str | None             # its weights under models/ in the embedded set; None: it needs no model
    looping: bool = False          # runs DLoop's stages (several drafting stages a round)
    trained_by: str | None = None  # the recipe stage that writes its folder (specviz.training.recipe.STAGES)
    every_set: bool = False        # offered by every configured set too, not by the embedded set alone


DRAFTERS = (
    DrafterName("ar", "autoregressive (1-layer model)", "drafter-ar", trained_by="drafter"),
    DrafterName("lookup", "prompt lookup (no model)", None, every_set=True),
    DrafterName("dflash", "DFlash (parallel block)", "drafter-dflash", trained_by="block"),
    DrafterName("dspark", "DSpark (block + Markov head)", "drafter-dspark", trained_by="block"),
    DrafterName("dloop", "DLoop (DSpark stages, loop-aware training)", "drafter-dspark-loop", looping=True,
                trained_by="block"),
    # DLoop run on the DSpark drafter that never saw loop-aware training: the ablation of DLoop's Table 2
    DrafterName("dloop-plain", "DLoop without loop-aware training", "drafter-dspark", looping=True,
                trained_by="block"),
)
DRAFTER_LABELS = {d.name: d.label for d in DRAFTERS}
LOOPING = tuple(d.name for d in DRAFTERS if d.looping)
EMBEDDED_FOLDERS = {d.name: d.folder for d in DRAFTERS}     # the embedded set: every drafter, in this order
EVERY_SET = tuple(d.name for d in DRAFTERS if d.every_set)
LOOP_SUFFIX = "-dloop"   # a configured set offers each block drafter X also as X-dloop, run in DLoop's stages
