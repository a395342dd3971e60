"""The pages under ``/ui/``: people's way in, talking to the service over its public HTTP API."""
