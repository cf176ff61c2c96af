"""How one generation runs: `Settings` (drafter, verifier, proposals per round, length, sampling,
seed, DLoop's gate and stage limit) and the bounds a setting is checked against when it is made.

A `Settings` refuses a value out of range with a ValueError naming it, so the engine, the command
line and the pages never start a run they cannot finish. A trace records its settings whole
(specviz.generator.trace), which is why pydantic can read them back from a saved file.

Block size: `k` here is the number of proposals per round (DSpark's convention,
one proposal per drafter input position). DFlash counts the anchor inside its block:
dflash_block_size = k + 1 (see `from_dflash_block_size`).

A prompt has one check that needs no model (`check_prompt`), made here so the command line can
refuse an empty prompt before it loads the models.

What it leaves out: whether the model set has the named drafter (`ModelSet.drafter` says so when
the engine asks for it) and a host's limits on length and block size (specviz.hosting.config).
"""
from dataclasses import dataclass, field, replace

from pydantic import with_config

from specviz.generator.sampling import SamplingSettings

VERIFIERS = ("greedy", "sampling", "match")
MAX_K = 32


def check_prompt(prompt: str) -> None:
    """Raise ValueError for a prompt with nothing for a model to continue (empty or only spaces).

    >>> check_prompt("   ")
    Traceback (most recent call last):
    ValueError: The prompt is empty: type a few words for the model to continue.
    """
    if not prompt.strip():
        raise ValueError("The prompt is empty: type a few words for the model to continue.")


def from_dflash_block_size(dflash_block_size: int) -> int:
    """DFlash's block size counts the anchor: a block of b proposes b - 1 tokens.

    >>> from_dflash_block_size(16)
    15
    """
    return dflash_block_size - 1


# a saved trace holding a setting this code does not know still loads, without it
@with_config(extra="ignore")
@dataclass(frozen=True)
class Settings:
    """One generation's settings, checked when made.

    >>> Settings(k=99)
    Traceback (most recent call last):
    ValueError: block size must be between 1 and 32, got 99
    """
    drafter: str | None = "ar"      # None: plain decoding
    verifier: str = "greedy"
    k: int = 4                      # proposals per round, the sources' k
    max_new_tokens: int = 48
    sampling: SamplingSettings = field(default_factory=SamplingSettings)
    seed: int = 0
    loop_threshold: float = -2.0    # DLoop's gate g (<= 0): draft another stage while sum log q >= g
    max_stages: int = 3             # DLoop's S

    def __post_init__(self):
        if self.verifier not in VERIFIERS:
            raise ValueError(f"verifier must be one of {VERIFIERS}, got {self.verifier!r}")
        if not 1 <= self.k <= MAX_K:
            raise ValueError(f"block size must be between 1 and {MAX_K}, got {self.k}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max new tokens must be at least 1, got {self.max_new_tokens}")
        if self.loop_threshold > 0:
            raise ValueError(f"the loop threshold is a log-probability, so it must be <= 0, got {self.loop_threshold}")
        if not 1 <= self.max_stages <= 8:
            raise ValueError(f"max stages must be between 1 and 8, got {self.max_stages}")

    @classmethod
    def greedy(cls, drafter: str | None, max_new_tokens: int, **opts) -> "Settings":
        """Greedy verification at temperature 0: what every timed comparison and live lesson runs.

        >>> Settings.greedy("dspark", 8, k=3).sampling.temperature
        0
        """
        return cls(drafter=drafter, verifier="greedy", max_new_tokens=max_new_tokens,
                   sampling=SamplingSettings(temperature=0), **opts)

    def plain(self) -> "Settings":
        """The plain-decoding baseline of these settings: same verifier, sampling, seed and length, no drafter.

        >>> Settings.greedy("dspark", 8, k=3).plain().drafter, Settings().plain().k
        (None, 1)
        """
        return replace(self, drafter=None, k=1)
