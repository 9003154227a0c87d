"""Tool-prompt templates of streamparse (one per dialect), installed as the package ``streamparse.prompts``."""
