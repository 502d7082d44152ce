"""Job fair paradigm (MetaAgents): team assembly through applications, interviews, decisions and offers."""
