"""Rich rendering and the terminal review prompt. Only the CLI imports this package."""
