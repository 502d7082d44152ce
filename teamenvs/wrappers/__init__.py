"""Wrappers over the multi-agent envs: the Gymnasium single-agent view, and `MaskInInfo` (Box
observations with the action mask in `info`, for vectorising wrappers such as SuperSuit's)."""

from teamenvs.wrappers.mask_in_info import MaskInInfo

__all__ = ["MaskInInfo"]
