"""Wrappers over the multi-agent envs: the Gymnasium single-agent view, `MaskInInfo` (Box
observations with the action mask in `info`, for vectorising wrappers such as SuperSuit's), and
`make_async` (the single-agent view in Gymnasium's `AsyncVectorEnv`, one worker per CPU)."""

from teamenvs.wrappers.mask_in_info import MaskInInfo
from teamenvs.wrappers.vector import make_async

__all__ = ["MaskInInfo", "make_async"]
