"""(in progress)"""
from __future__ import annotations
from dataclasses import dataclass
from typing import Any
from ..dialects.spec import Dialect


@dataclass(frozen=True)
class Derivation:
    dialect: Dialect | None
    summary: str


def derive(renderer: Any, state: Any, stops: Any) -> Derivation:
    return Derivation(None, "not derived yet")
