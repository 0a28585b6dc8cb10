"""Crowd annotation rounds (Label Studio or files) and metric-vs-human agreement."""
