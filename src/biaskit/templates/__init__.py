"""Template expansion: HolisticBias descriptor x noun x template, translated gendered templates, HONEST.

* :mod:`biaskit.templates.holistic`: HolisticBias v1.0/v1.1 expansion (:func:`expand_holistic`,
  :func:`write_holistic`); :mod:`biaskit.templates.holistic_data` loads and validates the data
  (:func:`load_holistic` with user extension files), :mod:`biaskit.templates.holistic_phrases` builds the
  noun phrases and :mod:`biaskit.templates.holistic_plan` the row plan (filters, variants).
* :mod:`biaskit.templates.articles`: the indefinite article by pronunciation.
* :mod:`biaskit.templates.gendered`: the template language for gendered fill-mask templates with
  West Slavic agreement, and the bundled cs/pl/sk/en starter sets (:func:`expand_template_sets`).
* :mod:`biaskit.templates.sheet`: translation sheets (CSV/XLSX export/import, machine translation hook).
* :mod:`biaskit.templates.honest`: HONEST template import.
* :mod:`biaskit.templates.westslavic`: the West Slavic study's sentence spreadsheet (``template_sentences.xlsx``).
* :mod:`biaskit.templates.counterfactual`: counterfactual axes (word lists, :func:`load_axis`);
  :mod:`biaskit.templates.counterfactual_swap` swaps them in texts and builds the pairs table
  (:func:`counterfactual_table`).

The mask slot in files and prompts tables is :data:`MASK` (``<mask>``); runners call
:func:`to_model_mask` to put the tokenizer's own mask token in its place.
"""

from biaskit.templates.mask import MASK, find_mask_like, normalize_mask, to_model_mask

_LAZY = {
    "expand_holistic": "biaskit.templates.holistic",
    "write_holistic": "biaskit.templates.holistic",
    "load_holistic": "biaskit.templates.holistic_data",
    "indefinite_article": "biaskit.templates.articles",
    "expand_template_sets": "biaskit.templates.gendered",
    "load_template_set": "biaskit.templates.gendered",
    "starter_set": "biaskit.templates.gendered",
    "import_honest": "biaskit.templates.honest",
    "import_westslavic": "biaskit.templates.westslavic",
    "import_sheet": "biaskit.templates.sheet",
    "write_sheet": "biaskit.templates.sheet",
    "load_axis": "biaskit.templates.counterfactual",
    "counterfactual_table": "biaskit.templates.counterfactual_swap",
}

__all__ = ["MASK", "to_model_mask", "normalize_mask", "find_mask_like", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'biaskit.templates' has no attribute {name!r}")
