"""gatecli: a local multilingual gate for conversational agents.

The runtime (this package minus ``gatecli_train``) imports numpy, onnxruntime, tokenizers,
typer/rich, PyYAML and httpx only; training code lives in ``gatecli_train`` behind the
``[train]`` extra.
"""

__version__ = "0.1.0"
