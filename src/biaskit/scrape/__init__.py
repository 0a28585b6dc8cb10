"""Wikipedia (MediaWiki API or dump) -> clean sentences -> BOLD-style prompts."""
