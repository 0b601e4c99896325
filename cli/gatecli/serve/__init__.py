"""``gatecli serve``: the gate as a local HTTP service (behind the ``[serve]`` extra).

Modules, in the order a request meets them: :mod:`.config` (the frozen settings),
:mod:`.app` (the Starlette routes: auth, body and record caps, JSON errors, logging),
:mod:`.inputs` (request bodies to the same rows ``classify`` reads, and the rows it
writes), :mod:`.moderation` (the OpenAI moderation shape), :mod:`.batcher` (dynamic
micro-batching over a bounded queue, on gate worker threads), :mod:`.metrics`
(Prometheus text) and :mod:`.server` (uvicorn, SIGTERM drain).

Only :mod:`.app` and :mod:`.server` import starlette/uvicorn, and nothing outside this
package imports them: ``import gatecli`` and every other command stay as light as the edge
install.
"""
