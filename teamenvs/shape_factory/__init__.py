"""Shape Factory (CollabSim, after Bos et al. 2004): factories make a cheap specialty and trade for the shapes their orders need."""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="shape_factory_v0",
    env_class="teamenvs.shape_factory.env:ShapeFactoryEnv",
    gym_name="ShapeFactory",
    title="Shape Factory",
    summary="CollabSim Shape Factory: 6 factories make a cheap specialty shape and trade for the shapes their orders need (90 steps)",
    baselines="teamenvs.shape_factory.baselines",
    drawing="teamenvs.shape_factory.drawing",
    smoke_conditions=("baseline",),
    order=15,
    # ShapeFactoryConfig().max_steps = 90 steps (900 s at one step per 10 s); the session may end
    # sooner once every order of every agent is fulfilled
    max_episode_steps=90,
)
