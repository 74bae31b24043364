"""Type stubs of the verity package (the C++ extension verity._verity plus verify)."""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

class Error(RuntimeError):
    """Base of every verity error; the message is the library's."""

class ConfigError(Error, ValueError):
    """Bad option values, unknown factory strings, inconsistent settings."""

class FormatError(Error):
    """Malformed or damaged input: files, JSON lines, on-disk formats."""

def set_quiet(quiet: bool = True) -> None:
    """Silences the library's progress and log lines on stderr (True) or restores them."""

def build_index(corpus_dir: str, out_dir: str, bm25: bool = True, dense: bool = False,
                tokens: bool = False, encoder: str = "use-lite", *, fields: str = "title+text",
                analyzer: str = "english", k1: float = 0.9, b: float = 0.4,
                dense_index: str = "flat", token_precision: str = "fp16", batch_size: int = 32,
                threads: int = 0) -> Dict[str, Any]:
    """Builds an index directory from a corpus (as `verity index` does); returns its --json dict."""

class Hit:
    """One search result."""
    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def stage1_score(self) -> float: ...
    @property
    def verifier_score(self) -> Optional[float]: ...
    @property
    def verdict(self) -> Optional[str]: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def doc(self) -> int: ...

class Verification:
    """Stage-2 verdict on one (query, text) pair."""
    @property
    def probability(self) -> float: ...
    @property
    def verdict(self) -> Optional[str]: ...

class Pipeline:
    """The two-stage search pipeline over an index directory (thread-safe)."""
    def __init__(self, index_dir: str, stage1: str = "auto", verifier: str = "auto",
                 candidates: int = 100, *, fusion: Optional[str] = None,
                 rrf_k: Optional[float] = None, dense_weight: Optional[float] = None,
                 combine: Optional[str] = None, verifier_weight: Optional[float] = None,
                 penalty_beta: Optional[float] = None, penalty_tau: Optional[float] = None,
                 reject_below: Optional[float] = None, encoder: str = "",
                 threads: int = 0) -> None:
        """None takes the library's default (fusion="weighted", dense_weight=0.2,
        rrf_k=60, combine="weighted", verifier_weight=0.2, penalty_beta=0.5,
        penalty_tau=0.9); an option the opened pipeline does not read raises ConfigError."""
    def search(self, query: str, k: int = 10) -> List[Hit]:
        """Top-k hits for query, best first; 0 < k <= candidates. Releases the GIL; thread-safe."""
    def verify(self, query: str, texts: Sequence[str]) -> List[Verification]:
        """Stage 2 alone with this pipeline's encoder and verifier."""
    @property
    def stage1(self) -> str: ...
    @property
    def verifier(self) -> str: ...
    @property
    def threshold(self) -> Optional[float]: ...
    def describe(self) -> str: ...
    def __len__(self) -> int: ...

class Verifier:
    """Stage-2 verification without an index (encoder + verifier)."""
    def __init__(self, verifier: str = "default", *, encoder: str = "use-lite",
                 threshold: Optional[float] = None, threads: int = 0) -> None: ...
    def verify(self, query: str, texts: Sequence[str]) -> List[Verification]: ...
    @property
    def threshold(self) -> Optional[float]: ...
    def describe(self) -> str: ...

def verify(query: str, texts: Sequence[str], verifier: str = "default", *,
           encoder: str = "use-lite", threshold: Optional[float] = None) -> List[Verification]:
    """Verifies each text against query without an index (one Verification per text)."""

class Encoded:
    """Output of Encoder.encode: float32 views of the encoder's buffers (no copy)."""
    @property
    def pooled(self) -> npt.NDArray[np.float32]:
        """(n, dim) pooled vectors."""
    @property
    def tokens(self) -> List[npt.NDArray[np.float32]]:
        """n arrays of shape (len_i, dim); [] when encoded with tokens=False."""
    @property
    def token_strings(self) -> List[List[str]]: ...
    @property
    def lengths(self) -> List[int]: ...
    @property
    def dim(self) -> int: ...
    def __len__(self) -> int: ...

class Encoder:
    """A text encoder: "use-lite", "glove", "kind:DIR" or a model directory."""
    def __init__(self, spec: str = "use-lite") -> None: ...
    def encode(self, texts: Sequence[str], *, tokens: bool = True, normalize: bool = True,
               batch_size: int = 32, max_length: int = 0, threads: int = 0) -> Encoded: ...
    @property
    def spec(self) -> str: ...
    @property
    def dim(self) -> int: ...

def similarity_map(query: npt.ArrayLike, candidate: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """M[i][j] = cos(query_i, candidate_j): (len_q, dim), (len_d, dim) -> (len_q, len_d) float32."""

def evaluate(dataset_dir: str, retriever: str = "bm25", split: str = "test", k: int = 100, *,
             verifier: str = "none", candidates: int = 100, fusion: str = "weighted",
             rrf_k: float = 60.0, dense_weight: float = 0.2, combine: str = "weighted",
             verifier_weight: float = 0.2, penalty_beta: float = 0.5, penalty_tau: float = 0.9,
             reject_below: Optional[float] = None, encoder: str = "use-lite",
             dense_index: str = "flat", token_precision: str = "fp16", batch_size: int = 32,
             fields: str = "title+text", analyzer: str = "english", k1: float = 0.9,
             b: float = 0.4, metrics: str = "ndcg@10,acc@1,recall@100,mrr@10,map@100",
             ignore_identical_ids: bool = False, threads: int = 1, cache_dir: str = "",
             use_cache: bool = True, run: str = "") -> Dict[str, Any]:
    """`verity eval` on one BEIR dataset; returns the dict `verity eval --json` prints."""

class CacheLookup:
    """The answer of Cache.lookup: the hit served, or the miss and why."""
    hit: bool
    reason: str  # hit: "exact" | "verified"; miss: "empty" | "below_cosine_floor" | "below_threshold"
    threshold: float
    threshold_source: str  # "request" | "verifier" | "fallback"
    @property
    def id(self) -> Optional[int]: ...
    @property
    def response(self) -> Optional[str]: ...
    @property
    def prompt(self) -> Optional[str]:
        """The cached prompt that matched (None on a miss)."""
    @property
    def metadata(self) -> Optional[Dict[str, Any]]: ...
    @property
    def probability(self) -> Optional[float]:
        """Verifier probability of the entry served, or of the best candidate on a miss."""
    @property
    def similarity(self) -> Optional[float]: ...
    @property
    def best(self) -> Optional[Dict[str, Any]]:
        """On a miss, the candidate that lost (id, prompt, probability, similarity)."""
    @property
    def latency_ms(self) -> Dict[str, float]: ...
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object of POST /cache/lookup."""
    def __bool__(self) -> bool: ...

class Cache:
    """The verified semantic cache in one SQLite file (WAL mode); thread-safe."""
    def __init__(self, path: str, *, encoder: str = "", verifier: str = "default", candidates: int = 4,
                 cosine_floor: float = 0.5, max_entries: int = 0, max_bytes: int = 0,
                 durability: str = "full", create: bool = True) -> None: ...
    def put(self, prompt: str, response: str, *, namespace: str = "default",
            metadata: Optional[Dict[str, Any]] = None, ttl_s: Optional[float] = None) -> int:
        """Caches response for prompt; returns the entry id (the same prompt again replaces it)."""
    def put_many(self, items: Sequence[Tuple[str, str]], *, namespace: str = "default",
                 ttl_s: Optional[float] = None) -> List[int]: ...
    def lookup(self, prompt: str, *, namespace: str = "default",
               min_probability: Optional[float] = None) -> CacheLookup: ...
    def get(self, id: int) -> Optional[Dict[str, Any]]: ...
    def remove(self, id: int) -> bool: ...
    def clear(self, namespace: str = "default") -> int: ...
    def stats(self) -> Dict[str, Any]:
        """The object of GET /cache/stats."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...
    def __enter__(self) -> "Cache": ...
    def __exit__(self, *args: Any) -> None: ...
