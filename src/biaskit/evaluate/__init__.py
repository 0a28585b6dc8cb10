"""Model runners, metrics, statistics and reports (a biaskit subpackage, not the HF library)."""
