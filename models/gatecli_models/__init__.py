"""The shipped model folders, installed as package data so `gatecli classify` works without
`--model` after a plain `pip install` (see gatecli.artifact.default_model_dir)."""
