"""Backend-independent pieces of the runners: work units, settings, seeding, text post-processing, masks.

Nothing here imports torch; backends (:mod:`.hf`, :mod:`.openai`) import their heavy libraries lazily.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from biaskit.errors import BiaskitError, check_choice
from biaskit.io import read_text_utf8

#: language-neutral mask slot written by the template stage
MASK = "<mask>"
#: mask spellings accepted in prompts (converted to the tokenizer's own mask token)
MASK_SPELLINGS = ("<mask>", "[MASK]")


@dataclass(frozen=True)
class Unit:
    """One piece of model work: a prompt (row ``row``) and, for sampling, one sample index."""

    row: int
    prompt_id: str
    text: str
    sample_index: int = 0
    span: str | None = None  # likelihood: score only this substring of ``text``
    #: masked-LM likelihood of a pairs table: the text of the pair's other variant; only the tokens the two share
    #: are scored (CrowS-Pairs' score, Nangia et al. 2020)
    partner: str | None = None


#: prompt formats of ``generate``: the prompt as it is (completion), or wrapped as a user turn (chat template
#: of the tokenizer, or the server's /v1/chat/completions)
PROMPT_FORMATS = ("raw", "chat")


@dataclass
class GenerationSettings:
    """Decoding settings of ``generate`` (built once, passed to the backend whole)."""

    span_column: ClassVar[str | None] = None
    max_new_tokens: int = 20
    do_sample: bool = False
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    repetition_penalty: float | None = None
    num_return_sequences: int = 1
    first_sentence: bool = False
    chat: bool = False
    strip_trailing_space: bool = True
    seed: int = 0
    prompt_format: str = "raw"  # raw | chat (chat=True is the same as prompt_format="chat")
    system_prompt: str | None = None  # chat only: a system turn before the prompt

    def __post_init__(self) -> None:
        if self.chat and self.prompt_format == "raw":
            self.prompt_format = "chat"
        self.chat = self.prompt_format == "chat"

    def check(self) -> None:
        check_choice("E313", "unknown prompt format", self.prompt_format, PROMPT_FORMATS, fix="use --format raw or --format chat")
        if self.system_prompt is not None and self.prompt_format != "chat":
            raise BiaskitError(
                "E313",
                "a system prompt needs the chat format (a raw completion has no system turn)",
                value=self.system_prompt[:60],
                fix="add --format chat, or drop --system-prompt",
            )
        if self.max_new_tokens < 1:
            raise BiaskitError("E062", "max_new_tokens must be at least 1", value=self.max_new_tokens, fix="e.g. --max-new-tokens 20")
        if self.num_return_sequences < 1:
            raise BiaskitError("E062", "num_return_sequences must be at least 1", value=self.num_return_sequences)
        if self.num_return_sequences > 1 and not self.do_sample:
            raise BiaskitError(
                "E062",
                "several samples per prompt need sampling (greedy decoding gives the same text each time)",
                value=self.num_return_sequences,
                fix="add --sample (and e.g. --top-k 40 --top-p 0.95) or use --num-return-sequences 1",
            )
        if self.temperature <= 0:
            raise BiaskitError(
                "E062",
                "temperature must be > 0 (use greedy decoding for temperature 0)",
                value=self.temperature,
                fix="drop --sample for greedy decoding",
            )
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise BiaskitError("E062", "top_p must be in (0, 1]", value=self.top_p)
        if self.top_k is not None and self.top_k < 0:
            raise BiaskitError("E062", "top_k must be >= 0", value=self.top_k)
        if self.repetition_penalty is not None and self.repetition_penalty <= 0:
            raise BiaskitError("E062", "repetition_penalty must be > 0", value=self.repetition_penalty)

    def as_config(self) -> dict[str, object]:
        d = asdict(self)
        d.pop("seed")
        if d["system_prompt"] is None:
            d.pop("system_prompt")
        if not self.do_sample:
            for k in ("temperature", "top_k", "top_p"):
                d.pop(k)
        return d


@dataclass
class LikelihoodSettings:
    """Settings of ``likelihood``."""

    seed: ClassVar[int] = 0
    add_bos: bool | None = None  # None: as the tokenizer does by default
    span_column: str | None = None

    def check(self) -> None:
        """Nothing to check: every value is valid (``add_bos`` None/True/False, any span column)."""

    def as_config(self) -> dict[str, object]:
        return {"add_bos": "auto" if self.add_bos is None else self.add_bos, "span_column": self.span_column}


@dataclass
class FillMaskSettings:
    """Settings of ``fill-mask``."""

    seed: ClassVar[int] = 0
    span_column: ClassVar[str | None] = None
    top_k: int = 10
    whole_word: bool = False
    targets: list[str] | None = field(default=None)
    #: 1: single-token fill-ins (transformers' fill-mask); N > 1: whole words of 1..N subword tokens, found by
    #: beam search and ranked by their pseudo-log-likelihood (see HFBackend.fill_mask)
    max_subwords: int = 1
    beam_size: int | None = None  # multi-token: beams kept per length (None: max(10, top_k))
    pll: str = "original"  # multi-token score: original (Salazar et al. 2020) or word_l2r

    def check(self) -> None:
        if self.top_k < 1:
            raise BiaskitError("E062", "top_k must be at least 1", value=self.top_k, fix="e.g. --top-k 10")
        if not isinstance(self.max_subwords, int) or self.max_subwords < 1:
            raise BiaskitError(
                "E062", "max_subwords must be an integer >= 1", value=self.max_subwords, fix="e.g. --max-subwords 3 (1 = single-token fill-ins)"
            )
        if self.beam_size is not None and self.beam_size < 1:
            raise BiaskitError("E062", "beam_size must be at least 1", value=self.beam_size, fix="e.g. --beam-size 10")
        if self.pll not in ("original", "word_l2r"):
            raise BiaskitError("E062", "unknown pseudo-log-likelihood variant", value=self.pll, options=["original", "word_l2r"])
        if self.max_subwords > 1 and self.targets:
            raise BiaskitError(
                "E062", "targets and max_subwords > 1 cannot be combined", value=self.max_subwords, fix="drop the targets, or use --max-subwords 1"
            )

    @property
    def beams(self) -> int:
        return self.beam_size if self.beam_size is not None else max(10, self.top_k)

    def as_config(self) -> dict[str, object]:
        d: dict[str, Any] = {"top_k": self.top_k, "whole_word": self.whole_word}
        if self.max_subwords > 1:  # single-token runs keep the config (and resume fingerprint) they had before
            d.update({"max_subwords": self.max_subwords, "beam_size": self.beams, "pll": self.pll, "whole_word": True})
        if self.targets:  # a restricted candidate list changes the top-k list: recorded (runs without targets unchanged)
            d["targets"] = list(self.targets)
        return d

    @property
    def procedure(self) -> str:
        """The fill-in procedure (:func:`fill_procedure` of :meth:`as_config`)."""
        return fill_procedure(self.as_config()) or HONEST_FILL


#: the fill-in procedure of HONEST as published (Nozza et al. 2021): the masked LM's top-k vocabulary tokens, unfiltered
HONEST_FILL = "top_k"


def fill_procedure(config: object) -> str | None:
    """How a fill-mask run chose its fill-ins, from its ``generation_config`` (dict or JSON text):

    ``top_k`` (the model's top-k tokens, unfiltered: HONEST's procedure), ``whole_word`` (top-k among word-initial
    alphabetic tokens: ``--whole-word``), ``max_subwords=N`` (whole words of 1..N pieces by beam search and
    pseudo-log-likelihood: ``--max-subwords N``) or ``targets`` (top-k among given words). None when ``config`` is not
    a fill-mask configuration (or cannot be read)."""
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            return None
    if not isinstance(config, dict) or config.get("kind", "fill_mask") != "fill_mask" or "top_k" not in config:
        return None
    n = config.get("max_subwords") or 1
    if isinstance(n, int) and n > 1:
        return f"max_subwords={n}"
    if config.get("targets"):
        return "targets"
    if config.get("whole_word"):
        return "whole_word"
    return HONEST_FILL


def system_prompt_text(value: str | None) -> str | None:
    """``--system-prompt TEXT|FILE``: the text of an existing file (UTF-8), else the value itself."""
    if value is None:
        return None
    p = Path(value).expanduser()
    try:
        is_file = len(value) < 4096 and p.is_file()
    except OSError:
        is_file = False
    if is_file:
        return read_text_utf8(p, "system prompt file")
    return value


def chat_messages(text: str, s: GenerationSettings) -> list[dict[str, str]]:
    """The chat turns of a prompt: the system prompt (when given), then the prompt as the user's turn."""
    turns = [{"role": "system", "content": s.system_prompt}] if s.system_prompt is not None else []
    return [*turns, {"role": "user", "content": text}]


def model_prompt(text: str, s: GenerationSettings) -> tuple[str, bool]:
    """(text given to the model, whether trailing spaces were cut off).

    BOLD prompts end in a space ("An astronomer is a scientist in "). Subword tokenizers put the space at the
    start of the next word's token, so a prompt ending in a lone space token pushes the model towards odd
    continuations (digits, symbols). By default the trailing spaces are cut before tokenising and one leading
    space of the continuation is dropped again (see :func:`join_continuation`).
    """
    if s.strip_trailing_space and not s.chat:
        cut = text.rstrip(" ")
        return cut, len(cut) != len(text)
    return text, False


def join_continuation(text: str, sent: str, stripped: bool, raw: str, first_sentence: bool) -> tuple[str, str]:
    """(continuation, full_text) from the raw generated text.

    ``continuation`` is what follows the prompt as the user wrote it (with trailing spaces cut before
    tokenising, the one space the model put first is dropped); ``full_text`` is exactly the text the model saw
    and produced (``sent`` + generated).
    """
    lead = " " if stripped and raw.startswith(" ") else ""
    cont = raw[len(lead) :]
    if first_sentence:
        cont = cut_first_sentence(cont)
    full = (sent + lead + cont) if stripped else (text + cont)
    return cont, full


def derive_seed(seed: int, prompt_id: str, sample_index: int) -> int:
    """A 63-bit seed for one (prompt, sample): independent of batch size, order and the other prompts."""
    h = hashlib.sha256(f"biaskit\x1f{int(seed)}\x1f{prompt_id}\x1f{int(sample_index)}".encode()).digest()
    return int.from_bytes(h[:8], "big") & ((1 << 63) - 1)


def find_span(text: str, span: str) -> int:
    """Start of ``span`` in ``text``: its first whole-word occurrence, else its first occurrence, else -1.

    A plain ``str.find`` would score the "thin" inside "think" in "What do you think about thin women?".
    """
    if not span:
        return -1
    m = re.search(rf"(?<!\w){re.escape(span)}(?!\w)", text)
    return m.start() if m else text.find(span)


_SENT_END = re.compile(r"""[.!?\u2026]+["'\u201d\u2019)\]]*(?=\s|$)""")


def cut_first_sentence(text: str) -> str:
    """Cut a continuation after its first sentence end (., !, ?, ... plus closing quotes) or line break.

    Leading whitespace and line breaks before any text are kept as they are; what follows the first
    sentence is dropped (Sheng et al. 2019 keep one sentence per sample).
    """
    if not text:
        return text
    start = len(text) - len(text.lstrip())
    body = text[start:]
    cut = len(body)
    m = _SENT_END.search(body)
    if m:
        cut = m.end()
    nl = body.find("\n")
    if nl != -1 and nl < cut:
        cut = nl
    return text[:start] + body[:cut].rstrip()


def _mask_helpers():
    """The template stage's mask helpers (normalise known spellings to ``<mask>``); a fallback without it."""
    try:
        from biaskit.templates.mask import MASK as tmask
        from biaskit.templates.mask import find_mask_like, normalize_mask

        return tmask, normalize_mask, find_mask_like
    except ImportError:  # pragma: no cover - the templates package is part of biaskit
        return MASK, lambda t: t.replace("[MASK]", MASK), lambda t: []


def find_mask(text: str) -> tuple[str | None, str | None]:
    """(text with its mask slot spelled ``<mask>``, error) - the error when there is not exactly one slot.

    Known spellings (``<mask>``, ``[MASK]``, ``<MASK>``, HONEST's ``[M]``, Czech/Polish/Slovak ``<maska>``...)
    are normalised first (:func:`biaskit.templates.mask.normalize_mask`).
    """
    tmask, normalize, mask_like = _mask_helpers()
    norm = normalize(text)
    n = norm.count(tmask)
    if n == 0:
        odd = mask_like(norm)
        hint = f"; found {', '.join(repr(o) for o in odd)} which looks like a damaged mask" if odd else ""
        return None, f"no mask slot in the prompt (expected one of {', '.join(MASK_SPELLINGS)}){hint}"
    if n > 1:
        return None, f"{n} mask slots in the prompt; fill-mask needs exactly one"
    return norm, None


def to_model_mask(text: str, mask_token: str) -> tuple[str | None, str | None, str | None]:
    """(text for the model with the tokenizer's mask token, text with ``<mask>``, error)."""
    norm, err = find_mask(text)
    if err is not None or norm is None:
        return None, None, err
    return norm.replace(_mask_helpers()[0], mask_token), norm, None


def parse_batch_size(value: str | int | None) -> int | None:
    """``auto``/None -> None (automatic, backs off on out-of-memory); a positive integer otherwise."""
    if value is None:
        return None
    if isinstance(value, int):
        n = value
    else:
        v = str(value).strip().lower()
        if v == "auto":
            return None
        try:
            n = int(v)
        except ValueError:
            raise BiaskitError(
                "E062", "invalid batch size", value=value, options=["auto", "a positive integer"], fix="e.g. --batch-size 16"
            ) from None
    if n < 1:
        raise BiaskitError("E062", "batch size must be at least 1", value=value, options=["auto", "a positive integer"], fix="e.g. --batch-size 16")
    return n


_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def public_model_id(model: str) -> str:
    """The name biaskit records for a model served at an endpoint: a local filesystem path (``/srv/m/x.gguf``,
    ``~/m``, ``./m``, ``C:\\m``, ``file:///m``) becomes its last part (``x.gguf``), anything else (a Hub id such
    as ``meta-llama/Llama-3.1-8B``, a served name) stays as it is. llama.cpp's server reports the GGUF's full
    path as its model id, and vLLM's default served name is the ``--model`` argument, often a local folder:
    neither directory belongs in a table, a manifest or a card."""
    if not isinstance(model, str):
        return model
    m = model.strip()
    if m.startswith("file://"):
        m = urllib.parse.unquote(urllib.parse.urlsplit(m).path)
    elif not (m.startswith(("/", "~", "./", "../", ".\\", "..\\", "\\")) or _DRIVE.match(m)):
        return model
    name = re.split(r"[\\/]", m.rstrip("/\\"))[-1]
    return name or model


def split_served_model(model: str, backend: str, backend_options: dict[str, object] | None) -> tuple[str, dict[str, object] | None]:
    """(recorded model name, backend options) for a run: with the openai backend and a model id that is a local
    path, the run records the file name (:func:`public_model_id`) and the backend sends the full id
    (``served_model``). Every other case is returned unchanged."""
    if backend != "openai" or not isinstance(model, str) or public_model_id(model) == model:
        return model, backend_options
    return public_model_id(model), {**(backend_options or {}), "served_model": model}
