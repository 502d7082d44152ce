"""Wrappers over the multi-agent envs (the Gymnasium single-agent view, ...)."""
