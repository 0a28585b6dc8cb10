"""biaskit: build, extend and validate social-bias evaluation datasets for language models.

Importing this package is cheap: it never imports torch, transformers or spaCy. Heavy libraries are
imported inside the functions that need them (or through lazy registry entries).
"""

__version__ = "0.1.0"

from biaskit.errors import BiaskitError  # noqa: E402

__all__ = ["__version__", "BiaskitError"]
