"""Wrappers over the multi-agent envs: the Gymnasium single-agent view, `MaskInInfo` (Box
observations with the action mask in `info`, for vectorising wrappers such as SuperSuit's), `FlatInfo` (infos of
numbers only, for tensor libraries such as TorchRL), and
`make_async` (the single-agent view in worker processes: Gymnasium's `AsyncVectorEnv`, or `ProcessVectorEnv` with
several envs per worker)."""

from teamenvs.wrappers.flat_info import FlatInfo
from teamenvs.wrappers.mask_in_info import MaskInInfo
from teamenvs.wrappers.vector import ProcessVectorEnv, make_async

__all__ = ["FlatInfo", "MaskInInfo", "ProcessVectorEnv", "make_async"]
