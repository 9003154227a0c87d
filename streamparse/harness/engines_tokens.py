"""The tokenizer stand-in that vLLM's tool parsers get, since no model is loaded, and each model's special tokens.

Invariant: ``decode(encode(text)) == text`` for every text, and a model's special token is encoded to its id only
when it stands whole in the text given; nothing here imports an engine.

``VOCABULARIES`` holds, per streamparse dialect, the special tokens of the model family that writes it. Ids are
the real ones where a parser keys on them and they are published (Qwen, DeepSeek, Kimi-K2, Llama 3, harmony);
for the others they are stand-ins from ``STAND_IN_IDS`` up (the parsers there look them up by text in
``get_vocab()`` and never compare them with a literal). A family listed here has those markers as single
tokens, so the engines' mixed streams keep them whole (``whole_tokens``, ``workloads.split_keeping``), as a
detokenizer hands them over; the rest of the text is cut every 4 characters. ``KEYED_ON_IDS`` names the
dialects whose compared vLLM parsers find their markers only by token id: they are given ids.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["StandInTokenizer", "VOCABULARIES", "KEYED_ON_IDS", "STAND_IN_IDS", "whole_tokens"]

STAND_IN_IDS = 300_000  # first made-up id: above every real vocabulary here

_QWEN = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645, "<tool_call>": 151657,
         "</tool_call>": 151658, "<tool_response>": 151665, "</tool_response>": 151666, "<think>": 151667,
         "</think>": 151668}
_QWEN_SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
_DEEPSEEK = {"<｜begin▁of▁sentence｜>": 0, "<｜end▁of▁sentence｜>": 1, "<think>": 128798, "</think>": 128799,
             "<｜tool▁calls▁begin｜>": 128806, "<｜tool▁calls▁end｜>": 128807, "<｜tool▁call▁begin｜>": 128808,
             "<｜tool▁call▁end｜>": 128809, "<｜tool▁sep｜>": 128814}
_KIMI = {"[EOS]": 163585, "<|im_end|>": 163586, "<|tool_calls_section_begin|>": 163595,
         "<|tool_calls_section_end|>": 163596, "<|tool_call_begin|>": 163597, "<|tool_call_argument_begin|>": 163598,
         "<|tool_call_end|>": 163599}
_HARMONY = {"<|return|>": 200002, "<|constrain|>": 200003, "<|channel|>": 200005, "<|start|>": 200006,
            "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012}


def _made_up(*tokens: str) -> dict[str, int]:
    return {t: STAND_IN_IDS + i for i, t in enumerate(tokens)}


# dialect -> (vocabulary of special and added tokens, the ones the model marks special)
VOCABULARIES: dict[str, tuple[dict[str, int], tuple[str, ...]]] = {
    "hermes": (_QWEN, _QWEN_SPECIAL),
    "qwen3_coder": (_QWEN, _QWEN_SPECIAL),
    "glm45": (_made_up("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
                       "<think>", "</think>", "<|endoftext|>", "<|user|>", "<|observation|>"),
              ("<|endoftext|>", "<|user|>", "<|observation|>")),
    "deepseek_v3": (_DEEPSEEK, ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")),
    "deepseek_v31": (_DEEPSEEK, ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")),
    "deepseek_v32": (_DEEPSEEK, ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")),
    "kimi_k2": (_KIMI, ("[EOS]", "<|im_end|>")),
    "llama3_json": ({"<|begin_of_text|>": 128000, "<|eot_id|>": 128009, "<|python_tag|>": 128010,
                     "<|eom_id|>": 128008}, ("<|begin_of_text|>", "<|eot_id|>", "<|eom_id|>")),
    "openai": (_HARMONY, tuple(_HARMONY)),
    "minimax_m2": (_made_up("<minimax:tool_call>", "</minimax:tool_call>", "<think>", "</think>"), ()),
    "seed_oss": (_made_up("<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>", "<seed:eos>"),
                 ("<seed:eos>",)),
    "mistral": ({"</s>": 2, "[TOOL_CALLS]": 5, "[AVAILABLE_TOOLS]": 6, "[/AVAILABLE_TOOLS]": 7}, ("</s>",)),
    "hunyuan": (_made_up("<tool_calls>", "</tool_calls>"), ()),
    "gemma4": (_made_up("<|tool_call>", "<tool_call|>", '<|"|>', "<turn|>"), ("<turn|>",)),
    "lfm2": (_made_up("<|tool_call_start|>", "<|tool_call_end|>", "<|im_end|>"), ("<|im_end|>",)),
}
# vLLM's parsers of these look for their markers in token ids (jamba's: hunyuan's <tool_calls>)
KEYED_ON_IDS = ("deepseek_v3", "deepseek_v31", "mistral", "hunyuan")
_DEFAULT: tuple[dict[str, int], tuple[str, ...]] = (_made_up("<|endoftext|>"), ("<|endoftext|>",))


def whole_tokens(dialect: str) -> tuple[str, ...]:
    """The tokens a stream of ``dialect`` never cuts: its model's markers that are one token each (a detokenizer
    hands a token over whole); ``()`` where they are not known."""
    return tuple(VOCABULARIES[dialect][0]) if dialect in VOCABULARIES else ()


class StandInTokenizer:
    """The part of a Hugging Face tokenizer that vLLM's tool parsers read, for one model family.

    ``get_vocab()`` holds that family's special and added tokens (``VOCABULARIES``; Qwen's by default:
    ``<tool_call>`` is 151657); ``all_special_tokens`` are those the model marks special (vLLM's parser engine
    drops their text). Other text is not really tokenized: ``encode`` cuts it at those tokens and gives every
    other piece one id, from ``FIRST_PIECE_ID`` up, the same id each time the same piece comes back, so that
    ``decode(encode(text)) == text``, which the parser engine relies on (it decodes each id to place a
    special token in the delta's text).
    """

    FIRST_PIECE_ID = 400_000

    def __init__(self, dialect: str = "hermes") -> None:
        vocab, special = VOCABULARIES.get(dialect, _DEFAULT)
        self._vocab = dict(vocab)
        self._pieces: dict[str, int] = {}
        self._text = {i: t for t, i in self._vocab.items()}
        self._cut = re.compile("(" + "|".join(map(re.escape, sorted(self._vocab, key=len, reverse=True))) + ")")
        self.all_special_tokens = list(special)
        self.all_special_ids = [self._vocab[t] for t in special]
        self.eos_token = special[-1] if special else None
        self.eos_token_id = self._vocab[special[-1]] if special else None
        self.name_or_path = f"stand-in/{dialect}"

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def __len__(self) -> int:
        return self.FIRST_PIECE_ID + len(self._pieces)

    def _piece_id(self, piece: str) -> int:
        found = self._pieces.get(piece)
        if found is None:
            found = self._pieces[piece] = self.FIRST_PIECE_ID + len(self._pieces)
            self._text[found] = piece
        return found

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [self._vocab.get(piece) or self._piece_id(piece) for piece in self._cut.split(text) if piece]

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        ids = [ids] if isinstance(ids, int) else ids
        return "".join(self._text[i] for i in ids if not (skip_special_tokens and i in self.all_special_ids))

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self._vocab.get(tokens) or self._piece_id(tokens)
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Any) -> Any:
        return self._text[ids] if isinstance(ids, int) else [self._text[i] for i in ids]
