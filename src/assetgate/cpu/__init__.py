"""CPU-bound work: the one door it goes through, by count and memory with deadlines
(``workgate``), and how a running job is told to stop (``stop``).
"""
