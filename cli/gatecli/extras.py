"""How to get an optional dependency, in words that are right for a wheel and for a clone.

A missing extra is the commonest first-run error; ``pip install 'gatecli[parquet]'`` alone
is wrong in a checkout (the package there is ``.``), so every such message comes from
:func:`install_hint`. Left out: importing anything (callers import lazily themselves).
"""

from __future__ import annotations


def install_hint(extra: str, *packages: str) -> str:
    """The install command for ``packages`` and for the ``extra`` that brings them.

    Example:
        >>> install_hint("parquet", "pyarrow")
        "pip install pyarrow (or the [parquet] extra: pip install 'gatecli[parquet]', or pip install -e '.[parquet]' in a clone)"
    """  # noqa: E501 - a doctest output line
    first = f"pip install {' '.join(packages)} (or the [{extra}] extra: " if packages else "("
    return f"{first}pip install 'gatecli[{extra}]', or pip install -e '.[{extra}]' in a clone)"
