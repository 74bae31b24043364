"""verity: retrieve fast, verify identity.

Stage 1 recalls candidates (BM25, dense, hybrid); stage 2 verifies each
(query, candidate) pair on its token similarity map and rejects structural
near-misses (role swaps, negations, spatial swaps, changed numbers).

    import verity
    verity.build_index("data/scifact", "idx", dense=True, tokens=True)
    p = verity.Pipeline("idx")                      # hybrid stage 1, the default verifier
    for hit in p.search("measles vaccine mortality", k=5):
        print(hit.id, hit.score, hit.title)
    verity.verify("a dog bit the man", ["the man bit a dog"])

The C++ library does the work; long calls (encode, search, build_index,
evaluate) release the GIL and stop on Ctrl-C with KeyboardInterrupt. Every
library error is a verity.Error (ConfigError, FormatError) with the library's
message.
"""
import functools as _functools
import os as _os
from typing import List as _List, Optional as _Optional, Sequence as _Sequence

# libgomp (torch's OpenMP runtime) spin-waits ~8 ms after every parallel
# region unless told otherwise, and reads this once, when it loads with the
# extension below: wait passively, as the verity CLI does, unless the user
# chose a policy. (Too late if numpy or torch loaded libgomp first.)
_os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from ._verity import (  # noqa: F401  (re-exported)
    Cache,
    CacheLookup,
    ConfigError,
    Encoded,
    Encoder,
    Error,
    FormatError,
    Hit,
    Pipeline,
    Verification,
    Verifier,
    build_index,
    evaluate,
    set_quiet,
    similarity_map,
)

__all__ = [
    "Cache", "CacheLookup", "ConfigError", "Encoded", "Encoder", "Error", "FormatError", "Hit", "Pipeline",
    "Verification", "Verifier", "build_index", "evaluate", "set_quiet", "similarity_map",
    "verify",
]


@_functools.lru_cache(maxsize=8)
def _verifier(verifier: str, encoder: str, threshold: _Optional[float]) -> Verifier:
    return Verifier(verifier, encoder=encoder, threshold=threshold)


def verify(query: str, texts: _Sequence[str], verifier: str = "default", *,
           encoder: str = "use-lite", threshold: _Optional[float] = None) -> _List[Verification]:
    """Verifies each text against query without an index.

    Returns one Verification per text: .probability is the verifier's score
    (P(same meaning) for the calibrated default verifier), .verdict is "match"
    or "near-miss" at `threshold`, else at the verifier's calibrated default
    threshold; None when there is neither (F0-F2, an uncalibrated verifier).
    The encoder and verifier are loaded once per (verifier, encoder, threshold)
    and reused; build a verity.Verifier to hold one yourself.
    """
    return _verifier(verifier, encoder, threshold).verify(query, list(texts))
