"""What an operator sees: request ids and the access log (``observe``, ``logs``), Prometheus
metrics (``metrics``, ``upstreams``), and ``/readyz`` (``health``).
"""
