"""The external formats biaskit reads, each declared once, with its one reader (docs/hardening.md, "One reader per
format"). A module per format:

* :mod:`~biaskit.formats.responses`: OpenAI-compatible server replies (chat and legacy completions, ``/v1/models``),
  pydantic schemas; a reply that breaks one is that row's ``*_error`` starting with E317.
* :mod:`~biaskit.formats.cache_entries`: the values of the response cache (a metric's columns, a model call's rows);
  one that breaks its shape is a miss (E311 warning, ``cache.damaged``).
* :mod:`~biaskit.formats.markers`: folder markers (:func:`biaskit.ownership.read_marker`).
* :mod:`~biaskit.formats.plans`: round plan files (:func:`biaskit.annotate.planning.read_plan`).
* :mod:`~biaskit.formats.run_state`: a resumable run's ``OUT.parts/run.json``.
* :mod:`~biaskit.formats.labelstudio`: Label Studio JSON exports (``annotate pull``).

Label columns are checked against their vocabulary by :func:`biaskit.labels.check_values` (and annotation tasks by
``labels.check_task``). Every JSON document goes through :mod:`biaskit.jsonread` (depth and size limits) and
declared records through :func:`biaskit.inputs.check_record`. This package sits above the input layer
(``inputs``, ``jsonread``) and below the domain packages; importing it loads nothing heavy (pydantic is loaded by
``formats.responses`` only, which the server backends import).
"""
