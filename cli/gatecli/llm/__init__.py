"""Escalation of ask-band turns to an optional LLM coach, and the local template coach.

Modules: ``coach`` (templates, no LLM), ``handoff`` (seed-003 context), ``schema`` (coach
JSON schema + validator), ``client`` (OpenAI-compatible chat client), ``escalate``
(``Escalator``, ``attach_escalation``, ``make_escalator``). Nothing is imported here so
that ``import gatecli.llm.coach`` stays cheap on the classify hot path.
"""
