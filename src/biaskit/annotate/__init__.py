"""Crowd annotation rounds (Label Studio or files) and metric-vs-human agreement.

Modules: :mod:`~biaskit.annotate.tasks` (task types, label configs, guidelines),
:mod:`~biaskit.annotate.masking` (XYZ masking), :mod:`~biaskit.annotate.sampling` (choosing a round),
:mod:`~biaskit.annotate.labelstudio` (push / pull against a Label Studio server),
:mod:`~biaskit.annotate.files` (task and result files for other platforms),
:mod:`~biaskit.annotate.results` (the shared validation path), :mod:`~biaskit.annotate.agreement`
(Fleiss, Krippendorff, Cohen; the majority vote is :mod:`biaskit.votes`), :mod:`~biaskit.annotate.validation` (metric vs humans) and
:mod:`~biaskit.annotate.ledger` (round history), :mod:`~biaskit.annotate.labelmodels` (crowd-kit label models),
:mod:`~biaskit.annotate.groupvalidity` (is a metric equally valid per group) and
:mod:`~biaskit.annotate.planning` (planning the next round). See docs/annotate.md.

Names are imported from their module (``from biaskit.annotate.sampling import sample_round``): the package
imports none of them, so ``import biaskit.annotate`` loads no submodule.
"""
