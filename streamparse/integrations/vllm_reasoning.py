"""``--reasoning-parser streamparse``: vLLM's ``ReasoningParser`` interface over streamparse's reasoning spans.

Invariant: the reasoning is what ``StreamParser`` reads as reasoning (``ReasoningSplit``), and what follows its
end marker is handed on raw, so the tool parser reads the rest of the answer whole; streamed
(``engine_based_streaming``: one delta at a time, ``has_engine_confirmed_reasoning_end`` once the end is read,
``finish_streaming`` at the end) and whole (``extract_reasoning``) split at the same place.

The spans and the start state come from the chat template with the request's ``chat_template_kwargs`` (vLLM
passes them to this constructor), like the tool parser's. The token-id questions vLLM asks of a reasoning
parser (``is_reasoning_end`` on a prompt or an output, ``extract_content_ids``) are answered on the decoded
text: reasoning has ended when an end marker follows the last opener.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .configure import EngineSetup, engine_setup, reasoning_markers
from .reading import ReasoningSplit
from .vllm import chat_template_of, vllm_api

__all__ = ["StreamparseReasoningParser"]

_api = vllm_api()
_ReasoningParser: Any = _api.ReasoningParser  # vLLM's class, found at run time
_TAIL_TOKENS = 16  # tokens decoded before a step's new ones: an end marker split over tokens is still seen


class StreamparseReasoningParser(_ReasoningParser):  # type: ignore[misc]  # (a class mypy cannot see)
    """vLLM's reasoning parser interface over ``ReasoningSplit``; one instance per request."""

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._template = chat_template_of(tokenizer)
        self._setup = engine_setup(self._template, kwargs.get("chat_template_kwargs"))
        self._openers, self._enders = reasoning_markers(self._setup.dialects)
        self._split: ReasoningSplit | None = None

    @property
    def setup(self) -> EngineSetup:
        return self._setup

    @property
    def reasoning_start_str(self) -> str | None:
        return self._openers[0] if self._openers else None

    @property
    def reasoning_end_str(self) -> str | None:
        return self._enders[0] if self._enders else None

    # ------------------------------------------------------------------ text

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        split = ReasoningSplit(self._setup.parser_options())
        said, rest = split.feed(model_output)
        said_end, rest_end = split.close()
        reasoning, content = said + said_end, rest + rest_end
        return reasoning or None, content or None

    def extract_reasoning_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                    previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                    delta_token_ids: Sequence[int]) -> Any:
        if self._split is None:
            self._split = ReasoningSplit(self._setup.parser_options())
        said, rest = self._split.feed(delta_text)
        return _message(said, rest)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._split is not None and self._split.ended

    def finish_streaming(self) -> Any:
        if self._split is None:
            return None
        said, rest = self._split.close()
        return _message(said, rest)

    # ------------------------------------------------------------------ token ids

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        return self._ended_in(self._decode(input_ids))

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        new = list(delta_ids)
        tail = list(input_ids)[-(len(new) + _TAIL_TOKENS):]
        return any(e in self._decode(tail) for e in self._enders)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """The ids after the last end marker; with none, all of them when no reasoning opened, else none."""
        ids = list(input_ids)
        single = {i for e in self._enders if isinstance(i := self.vocab.get(e), int)}
        for at in range(len(ids) - 1, -1, -1):  # an end marker that is one token (the usual case)
            if ids[at] in single:
                return ids[at + 1:]
        for start in range(len(ids) - 1, -1, -1):  # one spread over tokens: the shortest tail holding it
            if any(e in self._decode(ids[start:]) for e in self._enders):
                stop = next(s for s in range(start + 1, len(ids) + 1)
                            if any(e in self._decode(ids[start:s]) for e in self._enders))
                return ids[stop:]
        opened = self._setup.start_in_reasoning or any(o in self._decode(ids) for o in self._openers)
        return [] if opened else ids

    def _ended_in(self, text: str) -> bool:
        last_end = max((text.rfind(e) for e in self._enders), default=-1)
        last_open = max((text.rfind(o) for o in self._openers), default=-1)
        return last_end >= 0 and last_end > last_open

    def _decode(self, ids: Sequence[int]) -> str:
        if not ids:
            return ""
        text: str = self.model_tokenizer.decode(list(ids), skip_special_tokens=False)
        return text


def _message(said: str, rest: str) -> Any:
    if not said and not rest:
        return None
    return _api.DeltaMessage(reasoning=said or None, content=rest or None)
