"""Lark grammars of streamparse, installed as the package ``streamparse.grammars``."""
