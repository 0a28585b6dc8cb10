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

__all__ = ["MASK", "to_model_mask", "normalize_mask", "find_mask_like"]
