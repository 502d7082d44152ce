"""What every paradigm shares: base env, command language, messaging, configs, recorder, metric helpers."""
