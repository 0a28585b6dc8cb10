"""Interoperability with other evaluation tools.

:mod:`biaskit.interop.lmeval`: EleutherAI's lm-evaluation-harness (export biaskit prompt tables as lm-eval task
folders, import its ``--log_samples`` output as generations tables). Nothing here imports lm_eval, torch or
transformers at import time.
"""
