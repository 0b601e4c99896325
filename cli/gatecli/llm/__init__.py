"""Escalation of ask-band turns to an optional LLM coach.

Modules: ``handoff`` (seed-003 context), ``schema`` (coach JSON schema + validator),
``client`` (OpenAI-compatible chat client), ``escalate`` (``Escalator``,
``attach_escalation``, ``make_escalator``). The local template coach that every ``ask``
gets without an LLM is part of the runtime proper (:mod:`gatecli.coach`). Nothing is
imported here, so importing one module does not pull in httpx.
"""
