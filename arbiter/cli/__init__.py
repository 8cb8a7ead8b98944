"""The `arbiter` command line: `main` builds the typer app, one module per command group."""
