"""The package version (a foundation module: provenance, chunk fingerprints and ``sim.__version__`` read it)."""

__version__ = "0.1.0"
