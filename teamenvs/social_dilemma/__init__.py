"""Social dilemmas: CollabSim's DayTrader (`day_trader_v0`) and a GovSim-style commons (`commons_v0`)."""
