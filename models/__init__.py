"""Shipped TorchScript value networks and bucket tables (see models/README.md and manifest.json)."""

from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent
