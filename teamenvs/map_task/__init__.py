"""Map Task (HCRC / CollabSim): a guide talks a follower along a route on maps that differ."""
